/* The C APIs from C: compile an ONNX model (collage.h), load artifacts from a file and from
 * memory, run them and compare with the reference outputs, and check that errors come back as
 * statuses with the expected code and message.
 *
 *   test_capi DATA_DIR    (the files tests/runtime/test_capi_fixture.cpp writes) */
#include <collage/collage.h>
#include <collage/runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* Succeeds or prints the message and counts a failure. */
static void expect_ok(const char* what, collage_status_t* status) {
  if (!status) return;
  fprintf(stderr, "%s failed: %s\n", what, collage_status_message(status));
  collage_status_free(status);
  ++failures;
}

/* Fails with `code` and a message containing `part`. */
static void expect_error(const char* what, collage_status_t* status, int32_t code,
                         const char* part) {
  if (!status) {
    fprintf(stderr, "%s: expected an error\n", what);
    ++failures;
    return;
  }
  if (collage_status_code(status) != code || !strstr(collage_status_message(status), part)) {
    fprintf(stderr, "%s: got code %d \"%s\", expected code %d containing \"%s\"\n", what,
            collage_status_code(status), collage_status_message(status), code, part);
    ++failures;
  }
  collage_status_free(status);
}

static char* path_in(const char* dir, const char* file) {
  char* p = malloc(strlen(dir) + strlen(file) + 2);
  sprintf(p, "%s/%s", dir, file);
  return p;
}

static npy_array_t read_npy(const char* dir, const char* file) {
  npy_array_t a;
  char err[256];
  char* path = path_in(dir, file);
  if (npy_read_f32(path, &a, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    exit(1);
  }
  free(path);
  return a;
}

static DLTensor view(float* data, int32_t ndim, int64_t* shape) {
  DLTensor t = {data, {kDLCPU, 0}, ndim, {kDLFloat, 32, 1}, shape, NULL, 0};
  return t;
}

/* Runs `module` on the fixture input and compares with the expected logits. */
static void check_outputs(collage_module_t* module, npy_array_t* input, npy_array_t* expected) {
  float out[10];
  int64_t out_shape[2] = {1, 10};
  DLTensor x = view(input->data, input->ndim, input->shape);
  DLTensor y = view(out, 2, out_shape);
  expect_ok("run", collage_module_run(module, &x, 1, &y, 1));
  CHECK(expected->count == 10);
  for (int i = 0; i < 10; ++i)
    CHECK(fabsf(out[i] - expected->data[i]) <= 1e-4f * (1 + fabsf(expected->data[i])));
}

static void test_runtime(const char* dir, npy_array_t* input, npy_array_t* expected) {
  CHECK(strcmp(collage_runtime_version(), "") != 0);
  CHECK(collage_runtime_abi_version() == COLLAGE_RUNTIME_ABI_VERSION);

  char* artifact = path_in(dir, "mlp.collage");
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.num_threads = 2;
  collage_module_t* module = NULL;
  expect_ok("load", collage_module_load_file(artifact, &options, &module));
  if (!module) exit(1);
  CHECK(collage_module_num_inputs(module) == 1);
  CHECK(collage_module_num_outputs(module) == 1);
  collage_tensor_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  expect_ok("input info", collage_module_input_info(module, 0, &info));
  CHECK(strcmp(info.name, "x") == 0);
  CHECK(info.ndim == 2 && info.shape[0] == 1 && info.shape[1] == 16);
  expect_ok("output info", collage_module_output_info(module, 0, &info));
  CHECK(strcmp(info.name, "logits") == 0);
  expect_error("info out of range", collage_module_input_info(module, 3, &info),
               COLLAGE_STATUS_INVALID_ARGUMENT, "input 3 out of range");

  expect_ok("profiling on", collage_module_set_profiling(module, 1));
  check_outputs(module, input, expected);
  char* trace = path_in(dir, "trace.json");
  expect_ok("write profile", collage_module_write_profile(module, trace));
  FILE* f = fopen(trace, "rb");
  CHECK(f && fgetc(f) == '{');
  if (f) fclose(f);
  free(trace);

  /* A wrong input shape is named in the message. */
  float out[10];
  int64_t bad_shape[2] = {2, 8}, out_shape[2] = {1, 10};
  DLTensor x = view(input->data, 2, bad_shape), y = view(out, 2, out_shape);
  expect_error("wrong shape", collage_module_run(module, &x, 1, &y, 1),
               COLLAGE_STATUS_INVALID_ARGUMENT, "input 0 'x': expected f32[1x16], got f32[2x8]");
  collage_module_release(module);

  /* The same file from memory, then cut short. */
  f = fopen(artifact, "rb");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = malloc((size_t)size);
  CHECK(fread(bytes, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  expect_ok("load memory", collage_module_load_memory(bytes, (size_t)size, NULL, &module));
  if (module) check_outputs(module, input, expected);
  collage_module_release(module);
  expect_error("truncated", collage_module_load_memory(bytes, (size_t)size / 2, NULL, &module),
               COLLAGE_STATUS_CORRUPT, "truncated artifact");
  CHECK(module == NULL);
  free(bytes);
  free(artifact);

  expect_error("missing file", collage_module_load_file("/no/such.collage", NULL, &module),
               COLLAGE_STATUS_NOT_FOUND, "/no/such.collage");
  expect_error("null path", collage_module_load_file(NULL, NULL, &module),
               COLLAGE_STATUS_INVALID_ARGUMENT, "NULL path");
  collage_module_release(NULL);
  collage_status_free(NULL);
}

/* The phases a progress callback was told, in order, each once ("import,measure,...,build"). */
typedef struct {
  char phases[256];
  int calls;
} progress_log_t;

static void log_progress(void* user_data, const collage_compile_progress_t* p) {
  progress_log_t* log = user_data;
  ++log->calls;
  CHECK(p->struct_size == sizeof *p && p->phase && p->detail);
  if (p->total) CHECK(p->done <= p->total);
  const char* last = strrchr(log->phases, ',');
  last = last ? last + 1 : log->phases;
  if (strcmp(last, p->phase) == 0) return;
  if (log->phases[0]) strncat(log->phases, ",", sizeof log->phases - strlen(log->phases) - 1);
  strncat(log->phases, p->phase, sizeof log->phases - strlen(log->phases) - 1);
}

static void test_compiler(const char* dir, npy_array_t* input, npy_array_t* expected) {
  collage_compiler_t* compiler = NULL;
  expect_ok("compiler", collage_compiler_create(&compiler));
  if (!compiler) exit(1);
  collage_compile_options_t options;
  collage_compile_options_init(&options);
  options.strategy = "single:eigen";
  progress_log_t log = {{0}, 0};
  options.progress = log_progress;
  options.progress_user_data = &log;
  char* model = path_in(dir, "mlp.onnx");
  char* artifact = path_in(dir, "mlp_from_c.collage");
  char* report = NULL;
  expect_ok("compile", collage_compile(compiler, model, &options, artifact, &report));
  CHECK(report && strstr(report, "\"groups\"") && strstr(report, "eigen"));
  collage_free(report);
  /* single:eigen searches nothing: the import, then the build. */
  if (strcmp(log.phases, "import,build") != 0) {
    fprintf(stderr, "progress: phases \"%s\" (%d calls)\n", log.phases, log.calls);
    ++failures;
  }
  options.progress = NULL;
  collage_module_t* module = NULL;
  expect_ok("load compiled", collage_module_load_file(artifact, NULL, &module));
  if (module) check_outputs(module, input, expected);
  collage_module_release(module);

  /* From memory to memory. */
  FILE* f = fopen(model, "rb");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* onnx = malloc((size_t)size);
  CHECK(fread(onnx, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  void* bytes = NULL;
  size_t bytes_size = 0;
  /* op-level, told: the candidates are measured, then searched. */
  options.strategy = "op-level";
  progress_log_t searched = {{0}, 0};
  options.progress = log_progress;
  options.progress_user_data = &searched;
  expect_ok("compile memory", collage_compile_memory(compiler, onnx, (size_t)size, &options, &bytes,
                                                     &bytes_size, NULL));
  if (strcmp(searched.phases, "import,candidates,measure,op-level,build") != 0) {
    fprintf(stderr, "progress (op-level): phases \"%s\"\n", searched.phases);
    ++failures;
  }
  options.progress = NULL;
  expect_ok("load compiled memory", collage_module_load_memory(bytes, bytes_size, NULL, &module));
  if (module) check_outputs(module, input, expected);
  collage_module_release(module);
  collage_free(bytes);

  /* Errors. */
  expect_error("garbage model",
               collage_compile_memory(compiler, "not onnx", 8, &options, &bytes, &bytes_size, NULL),
               COLLAGE_STATUS_INVALID_ARGUMENT, "");
  CHECK(bytes == NULL);
  expect_error("missing model",
               collage_compile_file(compiler, "/no/model.onnx", &options, artifact, NULL),
               COLLAGE_STATUS_NOT_FOUND, "/no/model.onnx");
  options.executor = "fastest";
  expect_error("bad executor", collage_compile(compiler, model, &options, artifact, NULL),
               COLLAGE_STATUS_INVALID_ARGUMENT, "executor 'fastest'");
  options.executor = NULL;
  options.strategy = "single:nosuch";
  expect_error("bad strategy", collage_compile_file(compiler, model, &options, artifact, NULL),
               COLLAGE_STATUS_INVALID_ARGUMENT, "nosuch");
  options.strategy = "single:reference";
  expect_error("reference kernels", collage_compile_file(compiler, model, &options, artifact, NULL),
               COLLAGE_STATUS_INVALID_ARGUMENT, "reference backend, which has no runtime module");
  /* Generated code forced to an AVX2 target (x86-64-v3), which an AVX-512 machine runs too. */
  options.strategy = "single:native";
  options.target = "no-such-cpu";
  expect_error("bad target", collage_compile_file(compiler, model, &options, artifact, NULL),
               COLLAGE_STATUS_INVALID_ARGUMENT, "no-such-cpu");
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    options.target = "avx2";
    expect_ok("compile for avx2", collage_compile_file(compiler, model, &options, artifact, NULL));
    expect_ok("load avx2", collage_module_load_file(artifact, NULL, &module));
    if (module) check_outputs(module, input, expected);
    collage_module_release(module);
  }
#endif
  options.target = NULL;
  expect_error("bad plugin", collage_compiler_load_plugin(compiler, "/no/plugin.so"),
               COLLAGE_STATUS_INVALID_ARGUMENT, "/no/plugin.so");
  free(onnx);
  free(model);
  free(artifact);
  collage_compiler_release(compiler);
  collage_compiler_release(NULL);
}

/* A model with a symbolic batch compiled for batches 1 to 4 (collage_compile_options_t's batch
 * range), run at batch 3 with collage_module_run and with collage_module_run_outputs. */
static void test_dynamic_batch(const char* dir) {
  npy_array_t input = read_npy(dir, "input3.npy");
  npy_array_t expected = read_npy(dir, "expected3.npy");
  collage_compiler_t* compiler = NULL;
  expect_ok("compiler", collage_compiler_create(&compiler));
  if (!compiler) exit(1);
  collage_compile_options_t options;
  collage_compile_options_init(&options);
  options.strategy = "single:eigen";
  int64_t shape[2] = {-1, 16};
  collage_input_shape_t x_shape = {"x", 2, shape};
  options.num_input_shapes = 1;
  options.input_shapes = &x_shape;
  options.batch_min = 1;
  options.batch_max = 4;
  char* model = path_in(dir, "mlp_batch.onnx");
  void* bytes = NULL;
  size_t size = 0;
  char* report = NULL;
  FILE* f = fopen(model, "rb");
  fseek(f, 0, SEEK_END);
  long model_size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* onnx = malloc((size_t)model_size);
  CHECK(fread(onnx, 1, (size_t)model_size, f) == (size_t)model_size);
  fclose(f);
  expect_ok("compile batch range", collage_compile_memory(compiler, onnx, (size_t)model_size,
                                                          &options, &bytes, &size, &report));
  CHECK(report && strstr(report, "\"batches\"") && strstr(report, "\"padded\": true"));
  collage_free(report);
  collage_module_t* module = NULL;
  expect_ok("load batch range", collage_module_load_memory(bytes, size, NULL, &module));
  if (module) {
    collage_tensor_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    expect_ok("input info", collage_module_input_info(module, 0, &info));
    CHECK(info.batch_axis == 0 && info.batch_min == 1 && info.batch_max == 4);
    CHECK(info.shape[0] == 4);
    float out[30];
    int64_t out_shape[2] = {3, 10};
    DLTensor x = view(input.data, input.ndim, input.shape), y = view(out, 2, out_shape);
    expect_ok("run batch 3", collage_module_run(module, &x, 1, &y, 1));
    for (int i = 0; i < 30; ++i)
      CHECK(fabsf(out[i] - expected.data[i]) <= 1e-4f * (1 + fabsf(expected.data[i])));
    collage_outputs_t* outputs = NULL;
    expect_ok("run outputs", collage_module_run_outputs(module, &x, 1, &outputs));
    CHECK(collage_outputs_count(outputs) == 1);
    DLTensor got;
    expect_ok("output 0", collage_outputs_get(outputs, 0, &got));
    CHECK(got.ndim == 2 && got.shape[0] == 3 && got.shape[1] == 10);
    for (int i = 0; i < 30; ++i) CHECK(((float*)got.data)[i] == out[i]);
    expect_error("output 1", collage_outputs_get(outputs, 1, &got),
                 COLLAGE_STATUS_INVALID_ARGUMENT, "out of range");
    collage_outputs_release(outputs);
    int64_t five[2] = {5, 16};
    float big[80] = {0};
    DLTensor x5 = view(big, 2, five);
    expect_error("batch 5", collage_module_run_outputs(module, &x5, 1, &outputs),
                 COLLAGE_STATUS_INVALID_ARGUMENT, "compiled for batches 1 to 4");
    CHECK(outputs == NULL);
  }
  collage_module_release(module);
  collage_outputs_release(NULL);
  collage_free(bytes);
  free(onnx);
  free(model);
  collage_compiler_release(compiler);
  npy_free(&input);
  npy_free(&expected);
}

/* The leading struct_size of an options struct at `p`. */
/* Strings through the C ABI: strings.onnx (words str[2] -> StringConcat(words, words) -> twice)
 * compiled, its input passed as collage_string_t (the caller's bytes, not NUL-terminated), its
 * output read from collage_module_run_outputs (the library's bytes until the outputs are
 * released); collage_module_run refuses the string output. */
static void test_strings(const char* dir) {
  collage_compiler_t* compiler = NULL;
  expect_ok("compiler for strings", collage_compiler_create(&compiler));
  collage_compile_options_t options;
  collage_compile_options_init(&options);
  options.strategy = "greedy";
  char* model = path_in(dir, "strings.onnx");
  char* artifact = path_in(dir, "strings.test.collage");
  expect_ok("compile strings", collage_compile_file(compiler, model, &options, artifact, NULL));
  collage_module_t* module = NULL;
  expect_ok("load strings", collage_module_load_file(artifact, NULL, &module));
  if (module) {
    collage_tensor_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    expect_ok("string input info", collage_module_input_info(module, 0, &info));
    CHECK(info.dtype == COLLAGE_DTYPE_STRING && info.ndim == 1 && info.shape[0] == 2);
    CHECK(info.bytes == 2 * sizeof(collage_string_t));
    const char text[] = "ab\xc3\xa9xyz"; /* "ab" and "\xc3\xa9x", cut out of one buffer */
    collage_string_t words[2] = {{text, 2}, {text + 2, 3}};
    int64_t shape[1] = {2};
    DLTensor in;
    memset(&in, 0, sizeof in);
    in.data = words;
    in.device.device_type = kDLCPU;
    in.ndim = 1;
    in.dtype = collage_dtype_to_dlpack(COLLAGE_DTYPE_STRING);
    in.shape = shape;
    collage_outputs_t* outputs = NULL;
    expect_ok("run strings", collage_module_run_outputs(module, &in, 1, &outputs));
    DLTensor out;
    memset(&out, 0, sizeof out);
    if (outputs) {
      expect_ok("string output", collage_outputs_get(outputs, 0, &out));
      const collage_string_t* twice = (const collage_string_t*)out.data;
      CHECK(out.ndim == 1 && out.shape[0] == 2);
      CHECK(twice && twice[0].size == 4 && memcmp(twice[0].data, "abab", 4) == 0);
      CHECK(twice && twice[1].size == 6 && memcmp(twice[1].data, "\xc3\xa9x\xc3\xa9x", 6) == 0);
    }
    collage_outputs_release(outputs);
    collage_string_t result[2];
    out.data = result;
    expect_error("string output into a caller's buffer", collage_module_run(module, &in, 1, &out, 1),
                 COLLAGE_STATUS_INVALID_ARGUMENT, "collage_module_run_outputs");
  }
  collage_module_release(module);
  remove(artifact);
  free(model);
  free(artifact);
  collage_compiler_release(compiler);
}

static uint32_t struct_size_at(const void* p) {
  uint32_t size;
  memcpy(&size, p, sizeof size);
  return size;
}

/* Bytes [from, to) of `p` all equal `value`. */
static int all_bytes(const void* p, size_t from, size_t to, unsigned char value) {
  for (size_t i = from; i < to; ++i)
    if (((const unsigned char*)p)[i] != value) return 0;
  return 1;
}

/* Option structs are initialised by the caller's size: a program built against the first
 * version of a struct (smaller than today's) never has memory past it written or read. */
static void test_struct_versions(const char* dir) {
  CHECK(collage_compiler_abi_version() == COLLAGE_COMPILER_ABI_VERSION);
  const size_t v1 = COLLAGE_COMPILE_OPTIONS_V1_SIZE;
  CHECK(v1 < sizeof(collage_compile_options_t));
  unsigned char* guarded = malloc(v1 + 32);
  memset(guarded, 0xAB, v1 + 32);
  collage_compile_options_init_size((collage_compile_options_t*)guarded, v1);
  CHECK(struct_size_at(guarded) == v1);
  CHECK(all_bytes(guarded, sizeof(uint32_t), v1, 0xAB) == 0); /* defaults were written... */
  CHECK(all_bytes(guarded, v1, v1 + 32, 0xAB));               /* ...and nothing after */
  memset(guarded, 0xAB, v1 + 32);
  (collage_compile_options_init)((collage_compile_options_t*)guarded); /* the first entry point */
  CHECK(struct_size_at(guarded) == v1);
  CHECK(all_bytes(guarded, v1, v1 + 32, 0xAB));
  free(guarded);
  collage_compile_options_t full;
  collage_compile_options_init(&full);
  CHECK(full.struct_size == sizeof full && full.tree_strategy == NULL && full.executor == NULL &&
        full.zipmap == NULL);

  const size_t lv1 = COLLAGE_LOAD_OPTIONS_V1_SIZE;
  unsigned char* load = malloc(lv1 + 32);
  memset(load, 0xAB, lv1 + 32);
  (collage_load_options_init)((collage_load_options_t*)load);
  CHECK(struct_size_at(load) == lv1);
  CHECK(all_bytes(load, lv1, lv1 + 32, 0xAB));
  free(load);

  /* A first-version struct of exactly its size (a sanitizer build sees any read past it) compiles
   * with the defaults of the fields it lacks. */
  void* old = malloc(v1);
  (collage_compile_options_init)((collage_compile_options_t*)old);
  const char* strategy = "single:eigen";
  memcpy((char*)old + offsetof(collage_compile_options_t, strategy), &strategy, sizeof strategy);
  collage_compiler_t* compiler = NULL;
  expect_ok("compiler", collage_compiler_create(&compiler));
  char* model = path_in(dir, "mlp.onnx");
  char* artifact = path_in(dir, "mlp_v1_options.collage");
  char* report = NULL;
  expect_ok(
      "compile with v1 options",
      collage_compile(compiler, model, (const collage_compile_options_t*)old, artifact, &report));
  CHECK(report && strstr(report, "eigen"));
  collage_free(report);
  free(old);
  free(model);
  free(artifact);
  collage_compiler_release(compiler);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
    return 2;
  }
  npy_array_t input = read_npy(argv[1], "input.npy");
  npy_array_t expected = read_npy(argv[1], "expected.npy");
  test_runtime(argv[1], &input, &expected);
  test_compiler(argv[1], &input, &expected);
  test_dynamic_batch(argv[1]);
  test_struct_versions(argv[1]);
  test_strings(argv[1]);
  npy_free(&input);
  npy_free(&expected);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all C API checks passed\n");
  return 0;
}
