// Temporary empty registration; replaced by the real elementwise operator files.
#include "ops/op_sets.h"
namespace collage::ops {
void register_elementwise_ops(OpRegistry&) {}
}  // namespace collage::ops
