/* A Relu backend plugin for the loader tests, compiled once per flaw: PLUGIN_BAD_VERSION,
 * PLUGIN_SMALL_TABLE, PLUGIN_NO_ENTRY, PLUGIN_NO_BUILD, PLUGIN_BAD_PATTERN, PLUGIN_BUILD_FAILS,
 * PLUGIN_WRONG_SHAPE, PLUGIN_RUN_FAILS, or PLUGIN_CHECKED (a correct plugin whose check accepts
 * only 1-D inputs). */
#include <stdio.h>
#include <stdlib.h>

#include "collage/backend_plugin.h"

typedef struct {
  int64_t n;
  int32_t rank;
  int64_t shape[COLLAGE_PLUGIN_MAX_RANK];
} kernel_t;

#ifdef PLUGIN_BAD_PATTERN
static const collage_backend_pattern_t kPatterns[] = {{"relu", "(Relu *"}};
#else
static const collage_backend_pattern_t kPatterns[] = {{"relu", "(Relu *[dtype=f32])"}};
#endif

__attribute__((unused)) static int32_t check(void* user_data, int32_t pattern_index,
                                             const collage_group_t* match, char* err,
                                             size_t err_size) {
  (void)user_data;
  (void)pattern_index;
  const collage_group_value_t* in = &match->values[match->inputs[0]];
  if (in->type.rank == 1) return 0;
  snprintf(err, err_size, "input rank %d, only 1-D tensors", (int)in->type.rank);
  return 1;
}

__attribute__((unused)) static int32_t build(void* user_data, const collage_group_t* g, void** out,
                                             char* err, size_t err_size) {
  (void)user_data;
#ifdef PLUGIN_BUILD_FAILS
  (void)g;
  (void)out;
  snprintf(err, err_size, "no kernel for %s", "you");
  return 1;
#else
  if (g->num_nodes != 1 || g->num_inputs != 1 || g->num_outputs != 1) {
    snprintf(err, err_size, "one Relu per group");
    return 1;
  }
  const collage_tensor_desc_t* t = &g->values[g->inputs[0]].type;
  kernel_t* k = calloc(1, sizeof *k);
  if (!k || t->rank > COLLAGE_PLUGIN_MAX_RANK) {
    free(k);
    snprintf(err, err_size, "cannot build");
    return 1;
  }
  k->n = 1;
  k->rank = t->rank;
  for (int32_t d = 0; d < t->rank; ++d) {
    k->n *= t->shape[d];
    k->shape[d] = t->shape[d];
  }
  *out = k;
  return 0;
#endif
}

static int32_t output_type(void* kernel, int32_t index, int32_t* dtype, int32_t* rank,
                           int64_t* shape, char* err, size_t err_size) {
  const kernel_t* k = kernel;
  (void)index;
  (void)err;
  (void)err_size;
  *dtype = COLLAGE_DTYPE_F32;
  *rank = k->rank;
  for (int32_t d = 0; d < k->rank; ++d) shape[d] = k->shape[d];
#ifdef PLUGIN_WRONG_SHAPE
  shape[0] += 1;
#endif
  return 0;
}

static int32_t task_count(void* kernel) {
  (void)kernel;
  return 2;
}

static int32_t run(void* kernel, const DLTensor* args, int32_t num_args, int32_t task_id,
                   int32_t tasks, char* err, size_t err_size) {
  const kernel_t* k = kernel;
  (void)num_args;
#ifdef PLUGIN_RUN_FAILS
  snprintf(err, err_size, "device lost in task %d", (int)task_id);
  (void)k;
  (void)args;
  (void)tasks;
  return 1;
#else
  (void)err;
  (void)err_size;
  const float* x = args[0].data;
  float* y = args[1].data;
  for (int64_t i = k->n * task_id / tasks; i < k->n * (task_id + 1) / tasks; ++i)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
  return 0;
#endif
}

static void destroy(void* kernel) {
  free(kernel);
}

static const collage_backend_v1_t kTable = {
#ifdef PLUGIN_SMALL_TABLE
    .struct_size = 16,
#else
    .struct_size = sizeof(collage_backend_v1_t),
#endif
#ifdef PLUGIN_BAD_VERSION
    .abi_version = 99,
#else
    .abi_version = COLLAGE_BACKEND_ABI_VERSION,
#endif
    .name = "testrelu",
    .version = "1",
    .device = COLLAGE_DEVICE_CPU,
    .num_patterns = 1,
    .patterns = kPatterns,
#ifdef PLUGIN_CHECKED
    .check = check,
#else
    .check = NULL,
#endif
#ifdef PLUGIN_NO_BUILD
    .build = NULL,
#else
    .build = build,
#endif
    .kernel_output_type = output_type,
    .kernel_task_count = task_count,
    .kernel_run = run,
    .kernel_destroy = destroy,
};

#ifdef PLUGIN_NO_ENTRY
__attribute__((visibility("default"))) const collage_backend_v1_t* not_the_entry(void) {
  return &kTable;
}
#else
__attribute__((visibility("default"))) const collage_backend_v1_t* collage_backend_v1_get(void) {
  return &kTable;
}
#endif
