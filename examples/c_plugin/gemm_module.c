/* The run-time half of the example plugin: the runtime module libcollage_rt_cgemm.so, which
 * libcollage_runtime opens by the plugin's name ("cgemm") when an artifact holds its kernels. It
 * re-creates each kernel from what the compile-time half recorded (gemm_plugin.c, kernel_record):
 * the parameters, and the constants the artifact stores. Needs nothing but the C library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collage/runtime.h" /* collage_status_code_t: the error convention */
#include "collage/runtime_module.h"
#include "gemm_kernel.h"

typedef struct {
  gemm_params_t params;
  const void* constants[2]; /* point into the loaded artifact */
} kernel_t;

static int32_t fail(char* err, size_t err_size, int32_t code, const char* message) {
  snprintf(err, err_size, "%s", message);
  return code;
}

static int32_t kernel_create(const collage_kernel_desc_t* desc, void** kernel, char* err,
                             size_t err_size) {
  if (!desc || !kernel || desc->struct_size < sizeof *desc)
    return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT, "bad kernel descriptor");
  *kernel = NULL;
  if (!desc->entry || strcmp(desc->entry, "cgemm") != 0)
    return fail(err, err_size, COLLAGE_STATUS_UNSUPPORTED, "not a cgemm kernel");
  gemm_params_t p;
  if (desc->params_size != sizeof p || !desc->params)
    return fail(err, err_size, COLLAGE_STATUS_UNSUPPORTED, "parameters of the wrong size");
  memcpy(&p, desc->params, sizeof p);
  if (desc->num_constants > 2)
    return fail(err, err_size, COLLAGE_STATUS_UNSUPPORTED, "more than two constants");
  const char* problem = gemm_params_check(&p, desc->params_size, desc->num_args,
                                          desc->num_constants);
  if (problem) return fail(err, err_size, COLLAGE_STATUS_UNSUPPORTED, problem);
  kernel_t* k = calloc(1, sizeof *k);
  if (!k) return fail(err, err_size, COLLAGE_STATUS_INTERNAL, "out of memory");
  k->params = p;
  for (int32_t c = 0; c < desc->num_constants; ++c) k->constants[c] = desc->constants[c];
  *kernel = k;
  return 0;
}

static int32_t kernel_task_count(void* kernel) {
  return ((const kernel_t*)kernel)->params.tasks;
}

static int32_t kernel_run(void* kernel, void* const* args, int32_t task_id, int32_t task_count,
                          char* err, size_t err_size) {
  const kernel_t* k = kernel;
  if (!k || !args || task_count < 1 || task_id < 0 || task_id >= task_count)
    return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT, "bad kernel, arguments or task");
  gemm_run(&k->params, args, k->constants, task_id, task_count);
  return 0;
}

static void kernel_destroy(void* kernel) {
  free(kernel);
}

static const collage_rt_module_v1_t kModule = {
    .struct_size = sizeof(collage_rt_module_v1_t),
    .abi_version = COLLAGE_RT_MODULE_ABI_VERSION,
    .name = "cgemm",
    .version = "cgemm/2",
    .kernel_create = kernel_create,
    .kernel_task_count = kernel_task_count,
    .kernel_run = kernel_run,
    .kernel_destroy = kernel_destroy,
};

__attribute__((visibility("default"))) const collage_rt_module_v1_t* collage_rt_module_v1_get(
    void) {
  return &kModule;
}
