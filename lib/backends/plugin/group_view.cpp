// Builds the collage_group_t description of a node set for plugin callbacks.
#include "backends/plugin/group_view.h"

namespace collage {
namespace {

// Collects a node's attributes as C structs pointing into the (immutable) attribute object.
class AttrCollector : public AttrVisitor {
 public:
  std::vector<collage_group_attr_t> attrs;

  void field(const char* n, int64_t& v) override {
    auto& a = add(n, COLLAGE_ATTR_INT);
    a.i = v;
  }
  void field(const char* n, float& v) override {
    auto& a = add(n, COLLAGE_ATTR_FLOAT);
    a.f = v;
  }
  void field(const char* n, std::string& v) override {
    auto& a = add(n, COLLAGE_ATTR_STRING);
    a.s = v.c_str();
  }
  void field(const char* n, std::vector<int64_t>& v) override {
    auto& a = add(n, COLLAGE_ATTR_INTS);
    a.count = static_cast<int32_t>(v.size());
    a.ints = v.data();
  }
  void field(const char* n, std::vector<float>& v) override {
    auto& a = add(n, COLLAGE_ATTR_FLOATS);
    a.count = static_cast<int32_t>(v.size());
    a.floats = v.data();
  }
  void field(const char* n, Tensor& v) override {
    auto& a = add(n, COLLAGE_ATTR_TENSOR);
    if (!v.empty()) {
      a.tensor = tensor_desc(v.type());
      a.tensor_data = v.raw();
    }
  }

 private:
  collage_group_attr_t& add(const char* n, int32_t kind) {
    collage_group_attr_t a{};
    a.name = n;
    a.kind = kind;
    attrs.push_back(a);
    return attrs.back();
  }
};

}  // namespace

collage_tensor_desc_t tensor_desc(const TensorType& t) {
  collage_tensor_desc_t d{};
  d.dtype = dtype_code(t.dtype);
  d.rank = static_cast<int32_t>(t.shape.size());
  d.shape = t.shape.data();
  return d;
}

int32_t GroupView::index_of(ValueId v) {
  if (value_index_[v] >= 0) return value_index_[v];
  const Value& val = g_.value(v);
  collage_group_value_t c{};
  c.name = val.name.c_str();
  c.type = tensor_desc(val.type);
  if (const Tensor* t = g_.constant_of(v)) {
    c.kind = COLLAGE_VALUE_CONSTANT;
    c.data = t->raw();
  } else if (val.kind == ValueKind::node_output && nodes_.contains(val.producer)) {
    c.kind = COLLAGE_VALUE_NODE;
  } else {
    c.kind = COLLAGE_VALUE_INPUT;
  }
  value_index_[v] = static_cast<int32_t>(values_.size());
  values_.push_back(c);
  return value_index_[v];
}

GroupView::GroupView(const Graph& g, const NodeSet& nodes, const std::vector<ValueId>& inputs,
                     const std::vector<ValueId>& outputs)
    : g_(g), nodes_(nodes), value_index_(g.values().size(), -1) {
  for (ValueId v : inputs) inputs_.push_back(index_of(v));
  const std::vector<NodeId> members = nodes.to_vector();
  for (NodeId id : members) {
    const Node& n = g.node(id);
    std::vector<int32_t> ins, outs;
    for (ValueId v : n.inputs) ins.push_back(v == kNoValue ? -1 : index_of(v));
    for (ValueId v : n.outputs) outs.push_back(index_of(v));
    node_inputs_.push_back(std::move(ins));
    node_outputs_.push_back(std::move(outs));
    AttrCollector collect;
    // The collector only reads; the attribute objects of a graph are never modified.
    if (n.attrs) const_cast<OpAttrs&>(*n.attrs).visit(collect);
    node_attrs_.push_back(std::move(collect.attrs));
  }
  for (ValueId v : outputs) outputs_.push_back(index_of(v));
  for (size_t i = 0; i < members.size(); ++i) {
    const Node& n = g.node(members[i]);
    collage_group_node_t c{};
    c.op = n.op->name.c_str();
    c.name = n.name.c_str();
    c.num_inputs = static_cast<int32_t>(node_inputs_[i].size());
    c.inputs = node_inputs_[i].data();
    c.num_outputs = static_cast<int32_t>(node_outputs_[i].size());
    c.outputs = node_outputs_[i].data();
    c.num_attrs = static_cast<int32_t>(node_attrs_[i].size());
    c.attrs = node_attrs_[i].data();
    nodes_c_.push_back(c);
  }
  group_.struct_size = sizeof(collage_group_t);
  group_.num_values = static_cast<int32_t>(values_.size());
  group_.values = values_.data();
  group_.num_nodes = static_cast<int32_t>(nodes_c_.size());
  group_.nodes = nodes_c_.data();
  group_.num_inputs = static_cast<int32_t>(inputs_.size());
  group_.inputs = inputs_.data();
  group_.num_outputs = static_cast<int32_t>(outputs_.size());
  group_.outputs = outputs_.data();
}

}  // namespace collage
