/* Classifies one input with a compiled model: loads an artifact with the collage runtime, reads
 * the input from a .npy file, runs the model and prints the class with the highest score.
 *
 *   collage_classify [--module-dir DIR] model.collage input.npy [scores.npy]
 *
 * With a third argument the scores (the model's output) are also written there as .npy.
 * Link with -lcollage_runtime; the runtime modules the artifact needs
 * (libcollage_rt_<name>.so) are found in DIR (a plugin's runtime module, examples/c_plugin),
 * then next to libcollage_runtime.so. */
#include <collage/runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

/* Prints the status's message and frees it; returns 1 if there was an error. */
static int failed(const char* what, collage_status_t* status) {
  if (!status) return 0;
  fprintf(stderr, "%s: %s\n", what, collage_status_message(status));
  collage_status_free(status);
  return 1;
}

int main(int argc, char** argv) {
  collage_load_options_t options;
  collage_load_options_init(&options);
  if (argc > 2 && strcmp(argv[1], "--module-dir") == 0) {
    options.module_dir = argv[2];
    argc -= 2;
    argv += 2;
  }
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: collage_classify [--module-dir DIR] MODEL.collage INPUT.npy "
                    "[SCORES.npy]\n");
    return 2;
  }
  collage_module_t* module = NULL;
  if (failed("load", collage_module_load_file(argv[1], &options, &module))) return 1;

  collage_tensor_info_t in_info, out_info;
  memset(&in_info, 0, sizeof in_info);
  memset(&out_info, 0, sizeof out_info);
  in_info.struct_size = out_info.struct_size = sizeof in_info;
  if (collage_module_num_inputs(module) != 1 || collage_module_num_outputs(module) != 1 ||
      failed("input", collage_module_input_info(module, 0, &in_info)) ||
      failed("output", collage_module_output_info(module, 0, &out_info)) ||
      out_info.dtype != COLLAGE_DTYPE_F32) {
    fprintf(stderr, "expected a model with one input and one f32 output\n");
    collage_module_release(module);
    return 1;
  }

  npy_array_t input;
  char err[256];
  if (npy_read_f32(argv[2], &input, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    collage_module_release(module);
    return 1;
  }
  float* scores = malloc(out_info.bytes);
  DLTensor x = {input.data, {kDLCPU, 0}, input.ndim, {kDLFloat, 32, 1}, input.shape, NULL, 0};
  DLTensor y = {
      scores, {kDLCPU, 0}, out_info.ndim, out_info.dl_dtype, (int64_t*)out_info.shape, NULL, 0};
  /* A wrong input shape or dtype is reported here, naming the input. */
  int status = failed("run", collage_module_run(module, &x, 1, &y, 1));
  if (!status) {
    const int64_t n = (int64_t)(out_info.bytes / sizeof(float));
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
      if (scores[i] > scores[best]) best = i;
    printf("input '%s' -> output '%s'\n", in_info.name, out_info.name);
    printf("top class: %lld (score %.4f)\n", (long long)best, scores[best]);
    if (argc == 4 && npy_write_f32(argv[3], scores, out_info.ndim, out_info.shape, err,
                                   sizeof err) != 0) {
      fprintf(stderr, "%s\n", err);
      status = 1;
    }
  }
  free(scores);
  npy_free(&input);
  collage_module_release(module);
  return status;
}
