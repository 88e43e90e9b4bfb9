// The one exported symbol of libcollage_rt_strings.so: the runtime's entry into the module.
#include "str_module.h"

extern "C" __attribute__((visibility("default"))) const collage_rt_module_v1_t*
collage_rt_module_v1_get(void) {
  return collage::rt_strings::module_table();
}
