// GroupView: the C description (collage_group_t) of a set of nodes of a graph, handed to a
// plugin's check and build callbacks.
#pragma once

#include <vector>

#include "collage/backend_plugin.h"
#include "collage/subgraph.h"

namespace collage {

// Describes the nodes `nodes` of `g`. Kernel arguments are `inputs` then `outputs` (values of
// g). Borrows from g (names, shapes, attributes, constant data): g must outlive the view. Not
// copyable (the C structs point into the view's own vectors).
class GroupView {
 public:
  GroupView(const Graph& g, const NodeSet& nodes, const std::vector<ValueId>& inputs,
            const std::vector<ValueId>& outputs);
  GroupView(const GroupView&) = delete;
  GroupView& operator=(const GroupView&) = delete;

  const collage_group_t* get() const { return &group_; }

 private:
  int32_t index_of(ValueId v);

  const Graph& g_;
  const NodeSet& nodes_;
  std::vector<int32_t> value_index_;  // per value of g: index in values_, or -1
  std::vector<collage_group_value_t> values_;
  std::vector<std::vector<int32_t>> node_inputs_, node_outputs_;
  std::vector<std::vector<collage_group_attr_t>> node_attrs_;
  std::vector<collage_group_node_t> nodes_c_;
  std::vector<int32_t> inputs_, outputs_;
  collage_group_t group_{};
};

// The C dtype code of a DType (collage_dtype_t numbers DType).
inline int32_t dtype_code(DType d) {
  return static_cast<int32_t>(d);
}
// A value's type as a C descriptor (borrows the shape).
collage_tensor_desc_t tensor_desc(const TensorType& t);

}  // namespace collage
