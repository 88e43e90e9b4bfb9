// Group lowering for the Eigen backend: operand mapping and dispatch on the group's anchor
// operator.
#include "eigen_lowering.h"

#include <algorithm>

#include "core/str_cat.h"

namespace collage::eigen {

using rt_eigen::OperandRef;
using rt_eigen::OperandSource;

absl::StatusOr<OperandRef> OperandMap::ref(ValueId v) {
  if (const Tensor* t = g_.constant_of(v)) {
    auto [it, inserted] = constant_index_.try_emplace(v, static_cast<uint32_t>(constants_.size()));
    if (inserted) constants_.push_back(*t);
    return OperandRef{OperandSource::constant, it->second};
  }
  auto it = std::find(inputs_.begin(), inputs_.end(), v);
  if (it == inputs_.end())
    return absl::InvalidArgumentError(
        str_cat("eigen: value '", g_.value(v).name,
                "' is computed inside the group but is not the running value of its chain"));
  return OperandRef{OperandSource::arg, static_cast<uint32_t>(it - inputs_.begin())};
}

OperandRef OperandMap::derived_constant(const std::function<Tensor()>& make) {
  constants_.push_back(materialize_ ? make() : Tensor());
  return OperandRef{OperandSource::constant, static_cast<uint32_t>(constants_.size() - 1)};
}

absl::Status unsupported(const Node& node, std::string_view why) {
  return absl::InvalidArgumentError(
      str_cat("eigen: ", node.op_name(), " '", node.name, "': ", why));
}

absl::Status require_f32(const Node& node, const Graph& g) {
  for (const std::vector<ValueId>* list : {&node.inputs, &node.outputs})
    for (ValueId v : *list) {
      if (v == kNoValue) continue;
      const TensorType& t = g.value(v).type;
      if (t.dtype != DType::f32)
        return unsupported(node, str_cat("value '", g.value(v).name, "' has type ",
                                         type_to_string(t), "; only f32 is supported"));
    }
  return absl::OkStatus();
}

const std::vector<std::string>& unary_op_names() {
  static const std::vector<std::string> names = {
      "Relu", "Sigmoid", "Tanh", "Gelu",      "Exp",         "Log",       "Sqrt", "Reciprocal",
      "Neg",  "Abs",     "Erf",  "LeakyRelu", "HardSigmoid", "HardSwish", "Clip"};
  return names;
}

const std::vector<std::string>& binary_op_names() {
  static const std::vector<std::string> names = {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"};
  return names;
}

absl::StatusOr<LoweredKernel> lower_group(const Graph& g, const std::vector<NodeId>& nodes,
                                          const std::vector<ValueId>& inputs, bool materialize) {
  if (nodes.empty()) return absl::InvalidArgumentError("eigen: empty group");
  for (NodeId n : nodes)
    if (g.node(n).outputs.size() != 1)
      return unsupported(g.node(n), "only single-output operators are supported");
  OperandMap ops(g, inputs, materialize);
  const Node& anchor = g.node(nodes[0]);
  const std::vector<NodeId> chain(nodes.begin() + 1, nodes.end());
  const std::string& op = anchor.op_name();
  auto no_chain = [&]() -> absl::Status {
    if (chain.empty()) return absl::OkStatus();
    return unsupported(anchor, "takes no elementwise epilogue");
  };
  if (op == "MatMul") return lower_matmul(g, anchor, chain, ops);
  if (op == "Gemm") return lower_gemm(g, anchor, chain, ops);
  if (op == "Conv") return lower_conv(g, anchor, chain, ops);
  if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax") {
    if (absl::Status s = no_chain(); !s.ok()) return s;
    return lower_reduce(g, anchor, ops);
  }
  if (op == "Softmax" || op == "LogSoftmax") {
    if (absl::Status s = no_chain(); !s.ok()) return s;
    return lower_softmax(g, anchor, ops);
  }
  const auto& unary = unary_op_names();
  const auto& binary = binary_op_names();
  if (std::find(unary.begin(), unary.end(), op) != unary.end() ||
      std::find(binary.begin(), binary.end(), op) != binary.end())
    return lower_elementwise(g, anchor, chain, ops);
  return unsupported(anchor, "operator is not supported by the Eigen backend");
}

}  // namespace collage::eigen
