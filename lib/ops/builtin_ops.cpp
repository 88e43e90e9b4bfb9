// The built-in operator set.
#include "ops/op_sets.h"

namespace collage {

void register_builtin_ops(OpRegistry& registry) {
  ops::register_nn_ops(registry);
  ops::register_elementwise_ops(registry);
  ops::register_reduction_ops(registry);
  ops::register_tensor_ops(registry);
  ops::register_tree_ops(registry);
  ops::register_data_dependent_ops(registry);
  ops::register_control_flow_ops(registry);
}

}  // namespace collage
