// The tree-program operator family's registration entry point.
#include "ops/tree_ops.h"

#include "ops/op_sets.h"

namespace collage::ops {

void register_tree_ops(OpRegistry& r) {
  register_gather_elements_op(r);
  register_argmax_op(r);
  register_tree_ensemble_op(r);
}

}  // namespace collage::ops
