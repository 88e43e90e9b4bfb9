// Elementwise programs for the Eigen backend: one step per elementwise operator, epilogue chains
// and the standalone elementwise kernel.
#include "collage/ops/elementwise.h"
#include "core/str_cat.h"
#include "eigen_lowering.h"
#include "ops/op_util.h"

namespace collage::eigen {
namespace {

using rt_eigen::EwOp;

struct StepInfo {
  EwOp op = EwOp::relu;
  bool binary = false;
  float p0 = 0.f, p1 = 0.f;
};

absl::StatusOr<StepInfo> step_for(const Node& node) {
  static const std::map<std::string, EwOp, std::less<>> kUnary = {{"Relu", EwOp::relu},
                                                                  {"Sigmoid", EwOp::sigmoid},
                                                                  {"Tanh", EwOp::tanh},
                                                                  {"Exp", EwOp::exp},
                                                                  {"Log", EwOp::log},
                                                                  {"Sqrt", EwOp::sqrt},
                                                                  {"Neg", EwOp::neg},
                                                                  {"Reciprocal", EwOp::reciprocal},
                                                                  {"Abs", EwOp::abs},
                                                                  {"Erf", EwOp::erf},
                                                                  {"HardSwish", EwOp::hard_swish}};
  static const std::map<std::string, EwOp, std::less<>> kBinary = {
      {"Add", EwOp::add}, {"Sub", EwOp::sub}, {"Mul", EwOp::mul},
      {"Div", EwOp::div}, {"Pow", EwOp::pow}, {"PRelu", EwOp::prelu}};
  const std::string& op = node.op_name();
  if (auto it = kUnary.find(op); it != kUnary.end()) return StepInfo{it->second};
  if (auto it = kBinary.find(op); it != kBinary.end()) return StepInfo{it->second, true};
  if (op == "Gelu") {
    const std::string& mode = node.get<GeluAttrs>().approximate;
    if (mode == "none") return StepInfo{EwOp::gelu_erf};
    if (mode == "tanh") return StepInfo{EwOp::gelu_tanh};
    return unsupported(node, str_cat("approximate=\"", mode, "\" is not supported"));
  }
  if (op == "LeakyRelu") return StepInfo{EwOp::leaky_relu, false, node.get<LeakyReluAttrs>().alpha};
  if (op == "HardSigmoid") {
    const auto& a = node.get<HardSigmoidAttrs>();
    return StepInfo{EwOp::hard_sigmoid, false, a.alpha, a.beta};
  }
  if (op == "Clip") {
    const auto& a = node.get<ClipAttrs>();
    return StepInfo{EwOp::clip, false, a.min, a.max};
  }
  return unsupported(node, "is not an elementwise operator the Eigen backend runs");
}

}  // namespace

absl::Status ProgramBuilder::add_operand_step(const Node& node, EwOp op, ValueId operand,
                                              bool operand_first, float p0) {
  const TensorType& t = g_.value(operand).type;
  if (t.dtype != DType::f32)
    return unsupported(node, str_cat("operand '", g_.value(operand).name, "' has type ",
                                     type_to_string(t), "; only f32 is supported"));
  std::optional<Shape> b = ops::broadcast_shapes(t.shape, program_.shape);
  if (!b || *b != program_.shape)
    return unsupported(
        node, str_cat("operand '", g_.value(operand).name, "' of shape ", shape_to_string(t.shape),
                      " does not broadcast to ", shape_to_string(program_.shape)));
  absl::StatusOr<rt_eigen::OperandRef> ref = operands_.ref(operand);
  if (!ref.ok()) return ref.status();
  program_.operands.push_back({*ref, ops::broadcast_strides(t.shape, program_.shape)});
  program_.steps.push_back(
      {op, operand_first, static_cast<int32_t>(program_.operands.size() - 1), p0, 0.f});
  return absl::OkStatus();
}

void ProgramBuilder::add_strided_step(EwOp op, rt_eigen::OperandRef ref,
                                      std::vector<int64_t> strides, float p0) {
  program_.operands.push_back({ref, std::move(strides)});
  program_.steps.push_back(
      {op, false, static_cast<int32_t>(program_.operands.size() - 1), p0, 0.f});
}

absl::Status ProgramBuilder::add_node(const Node& node, int main_input) {
  if (absl::Status s = require_f32(node, g_); !s.ok()) return s;
  absl::StatusOr<StepInfo> info = step_for(node);
  if (!info.ok()) return info.status();
  const Shape& out = g_.value(node.outputs[0]).type.shape;
  if (out != program_.shape)
    return unsupported(
        node, str_cat("output shape ", shape_to_string(out), " differs from the running value's ",
                      shape_to_string(program_.shape)));
  if (!info->binary) {
    if (node.inputs.size() != 1) return unsupported(node, "expected one input");
    program_.steps.push_back({info->op, false, -1, info->p0, info->p1});
    return absl::OkStatus();
  }
  if (node.inputs.size() != 2) return unsupported(node, "expected two inputs");
  const ValueId other = node.inputs[1 - main_input];
  if (other == node.inputs[main_input]) return unsupported(node, "reads the running value twice");
  if (info->op == EwOp::prelu && main_input != 0)
    return unsupported(node, "the running value must be PRelu's first input");
  return add_operand_step(node, info->op, other, main_input == 1);
}

absl::Status ProgramBuilder::add_chain(const std::vector<NodeId>& nodes, ValueId main) {
  for (NodeId n : nodes) {
    const Node& node = g_.node(n);
    int main_input = -1, uses = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] == main) {
        main_input = static_cast<int>(i);
        ++uses;
      }
    if (uses != 1)
      return unsupported(
          node, str_cat("must read the previous result '", g_.value(main).name, "' exactly once"));
    if (absl::Status s = add_node(node, main_input); !s.ok()) return s;
    main = node.outputs[0];
  }
  return absl::OkStatus();
}

absl::StatusOr<LoweredKernel> lower_elementwise(const Graph& g, const Node& node,
                                                const std::vector<NodeId>& chain, OperandMap& ops) {
  if (absl::Status s = require_f32(node, g); !s.ok()) return s;
  absl::StatusOr<StepInfo> info = step_for(node);
  if (!info.ok()) return info.status();
  const size_t arity = info->binary ? 2 : 1;
  if (node.inputs.size() != arity) return unsupported(node, str_cat("expected ", arity, " inputs"));
  ProgramBuilder program(g, ops, g.value(node.outputs[0]).type.shape);
  if (absl::Status s = program.add_operand_step(node, EwOp::load, node.inputs[0], false); !s.ok())
    return s;
  if (info->binary) {
    if (absl::Status s = program.add_operand_step(node, info->op, node.inputs[1], false); !s.ok())
      return s;
  } else {
    if (absl::Status s = program.add_node(node, 0); !s.ok()) return s;
  }
  if (absl::Status s = program.add_chain(chain, node.outputs[0]); !s.ok()) return s;
  rt_eigen::ElementwiseParams params{program.take()};
  return LoweredKernel{rt_eigen::kEntryElementwise, rt_eigen::encode_params(params),
                       ops.take_constants()};
}

}  // namespace collage::eigen
