// Temporary empty registration; replaced by the real tensor operator files.
#include "ops/op_sets.h"
namespace collage::ops {
void register_tensor_ops(OpRegistry&) {}
}  // namespace collage::ops
