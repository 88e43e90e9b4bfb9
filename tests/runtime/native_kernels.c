/* Native kernels for the runtime tests, with the ABI of generated code
 * (collage_native_kernel_fn): f32[1000] relu and add-one, split into task_count chunks. */
#include <stdint.h>

#define N 1000

__attribute__((visibility("default"))) void collage_test_relu(void* const* args, int32_t task_id,
                                                              int32_t task_count) {
  const float* x = (const float*)args[0];
  float* y = (float*)args[1];
  for (int64_t i = (int64_t)N * task_id / task_count; i < (int64_t)N * (task_id + 1) / task_count;
       ++i)
    y[i] = x[i] > 0 ? x[i] : 0;
}

__attribute__((visibility("default"))) void collage_test_add_one(void* const* args, int32_t task_id,
                                                                 int32_t task_count) {
  const float* x = (const float*)args[0];
  float* y = (float*)args[1];
  for (int64_t i = (int64_t)N * task_id / task_count; i < (int64_t)N * (task_id + 1) / task_count;
       ++i)
    y[i] = x[i] + 1;
}
