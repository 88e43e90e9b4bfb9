/* Compiles a model with a backend plugin taking part, through the compiler's C API: the plugin
 * is loaded and registered under its name, placement runs with the given strategy, and the
 * artifact is written, with the placement report (JSON) beside it as OUT.collage.json.
 *
 *   compile_with_plugin PLUGIN.so MODEL.onnx OUT.collage [STRATEGY]
 *
 * STRATEGY defaults to "single:cgemm" (the example plugin takes every group it can). The
 * artifact runs wherever libcollage_runtime finds the plugin's runtime module
 * (libcollage_rt_cgemm.so): `collage_classify --module-dir DIR OUT.collage input.npy`. */
#include <collage/collage.h>
#include <stdio.h>

static int failed(const char* what, collage_status_t* status) {
  if (!status) return 0;
  fprintf(stderr, "%s: %s\n", what, collage_status_message(status));
  collage_status_free(status);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s PLUGIN.so MODEL.onnx OUT.collage [STRATEGY]\n", argv[0]);
    return 2;
  }
  collage_compiler_t* compiler = NULL;
  if (failed("compiler", collage_compiler_create(&compiler))) return 1;
  int status = failed("plugin", collage_compiler_load_plugin(compiler, argv[1]));
  collage_compile_options_t options;
  collage_compile_options_init(&options);
  options.strategy = argc == 5 ? argv[4] : "single:cgemm";
  char* report = NULL;
  if (!status)
    status = failed("compile", collage_compile(compiler, argv[2], &options, argv[3], &report));
  if (!status) {
    char path[4096];
    snprintf(path, sizeof path, "%s.json", argv[3]);
    FILE* f = fopen(path, "w");
    if (!f || fputs(report, f) < 0) {
      fprintf(stderr, "cannot write %s\n", path);
      status = 1;
    }
    if (f) fclose(f);
    if (!status) printf("wrote %s and %s\n", argv[3], path);
  }
  collage_free(report);
  collage_compiler_release(compiler);
  return status;
}
