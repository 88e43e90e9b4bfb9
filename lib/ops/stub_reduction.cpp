// Temporary empty registration; replaced by the real reduction operator files.
#include "ops/op_sets.h"
namespace collage::ops {
void register_reduction_ops(OpRegistry&) {}
}  // namespace collage::ops
