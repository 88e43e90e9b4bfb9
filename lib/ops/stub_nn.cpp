// Temporary empty registration; replaced by the real nn operator files.
#include "ops/op_sets.h"
namespace collage::ops {
void register_nn_ops(OpRegistry&) {}
}  // namespace collage::ops
