// The graph IR: an SSA dataflow graph of operator calls over typed values with static shapes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/context.h"
#include "collage/layout.h"
#include "collage/op.h"
#include "collage/tensor.h"

namespace collage {

using ValueId = int32_t;
using NodeId = int32_t;
constexpr ValueId kNoValue = -1;

enum class ValueKind : uint8_t { input, constant, node_output };

struct Value {
  std::string name;
  TensorType type;
  ValueKind kind = ValueKind::node_output;
  NodeId producer = -1;     // node_output: the producing node
  int output_index = 0;     // node_output: which of its outputs
  int32_t constant = -1;    // constant: index into Graph::constants()
  // How a kernel receives or returns the value (a group's standalone graph: its inputs and
  // outputs only); plain everywhere else.
  Layout layout;
};

struct Node {
  std::string name;  // unique within the graph
  const OpDef* op = nullptr;
  std::shared_ptr<const OpAttrs> attrs;
  std::vector<ValueId> inputs;   // kNoValue for an absent optional input
  std::vector<ValueId> outputs;
  template <typename A>
  const A& get() const { return static_cast<const A&>(*attrs); }
  const std::string& op_name() const { return op->name; }
};

// A graph owns its values, nodes and constants; ids stay valid for the graph's lifetime. Nodes are
// stored in a topological order. Graphs are built with GraphBuilder and are immutable afterwards;
// passes build new graphs.
class Graph {
 public:
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Tensor>& constants() const { return constants_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const Value& value(ValueId id) const { return values_[id]; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  // The constant behind a value, or null if it is not a constant.
  const Tensor* constant_of(ValueId id) const;
  // Nodes that read each value (computed once, on first use).
  const std::vector<std::vector<NodeId>>& users() const;
  const std::string& name() const { return name_; }

  // Totals for reports: parameters (elements of all constants), multiply-adds counted as 2 FLOPs.
  int64_t parameter_count() const;

 private:
  friend class GraphBuilder;
  std::string name_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<Tensor> constants_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  mutable std::shared_ptr<std::vector<std::vector<NodeId>>> users_;
};

// Builds a graph node by node, running shape inference as each node is added, so errors surface
// at the node that causes them. Node and value names are made unique.
class GraphBuilder {
 public:
  explicit GraphBuilder(const Context& ctx, std::string graph_name = "graph");

  ValueId add_input(std::string name, TensorType type);
  // Constants are stored once; the tensor is shared, not copied.
  ValueId add_constant(std::string name, Tensor value);
  // Adds a node of operator `op`. `attrs` null means the operator's defaults. `num_outputs` -1
  // lets the operator decide. Errors (unknown operator, wrong input count, shape inference
  // failure) name the operator and node; on error nothing is added.
  absl::StatusOr<std::vector<ValueId>> add_node(std::string_view op, std::vector<ValueId> inputs,
                                                std::shared_ptr<const OpAttrs> attrs = nullptr,
                                                std::string name = "", int num_outputs = -1);
  // Single-output convenience form.
  absl::StatusOr<ValueId> add(std::string_view op, std::vector<ValueId> inputs,
                              std::shared_ptr<const OpAttrs> attrs = nullptr, std::string name = "");
  void add_output(ValueId v);
  // Renames a value (e.g. to give a graph output its model name). The name is made unique.
  void set_value_name(ValueId v, std::string name);
  // The layout of an input or output value (checked by finish(): only inputs and outputs may
  // have a layout other than plain, and it must fit the value's type).
  void set_layout(ValueId v, Layout layout);

  const Value& value(ValueId id) const { return g_.values_[id]; }
  const Tensor* constant_of(ValueId id) const { return g_.constant_of(id); }
  const Context& context() const { return ctx_; }

  // Verifies and returns the graph; the builder is left empty.
  absl::StatusOr<Graph> finish();

 private:
  std::string unique_name(std::string base, bool node);
  const Context& ctx_;
  Graph g_;
  std::map<std::string, int, std::less<>> taken_value_names_, taken_node_names_;
};

// Typed attribute construction: make_attrs<ConvAttrs>([](auto& a) { a.group = 2; }).
template <typename A, typename F>
std::shared_ptr<const OpAttrs> make_attrs(F&& init) {
  auto a = std::make_shared<A>();
  init(*a);
  return a;
}

// Checks structural invariants: ids in range, topological order, types consistent with shape
// inference, unique names. Returns the first violation.
absl::Status verify_graph(const Context& ctx, const Graph& g);

// A readable text form, one node per line:
//   %conv1 : f32[1x64x112x112] = Conv(%input, %w0, %b0) {strides=[2,2], ...}  # node "conv1"
std::string print_graph(const Graph& g);

}  // namespace collage
