// The one exported symbol of libcollage_rt_cuda.so: the runtime's entry into the cuda module.
#include "cuda_module.h"

extern "C" __attribute__((visibility("default"))) const collage_rt_module_v1_t*
collage_rt_module_v1_get(void) {
  return collage::rt_cuda::module_table();
}
