// The one exported symbol of libcollage_rt_trees.so: the runtime's entry into the trees module.
#include "trees_module.h"

extern "C" __attribute__((visibility("default"))) const collage_rt_module_v1_t*
collage_rt_module_v1_get(void) {
  return collage::rt_trees::module_table();
}
