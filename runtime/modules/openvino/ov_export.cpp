// The one symbol libcollage_rt_openvino exports: the runtime finds the module table through it.
#include "ov_module.h"

extern "C" __attribute__((visibility("default"))) const collage_rt_module_v1_t*
collage_rt_module_v1_get(void) {
  return collage::rt_openvino::module_table();
}
