// ONNX conversions of the elementwise, logical, variadic, reduction and normalisation operators
// added for ONNX coverage, and of Size and CastLike (which need no IR operator of their own).
#include <string_view>

#include "core/str_cat.h"
#include "frontends/onnx/onnx_node.h"
#include "frontends/onnx/onnx_tensor.h"

namespace collage::onnx_import {
namespace {

using Result = absl::StatusOr<std::vector<Ref>>;

Result generic(NodeContext& n) {
  return n.emit(n.op_type(), n.inputs(), n.num_outputs() > 0 ? n.num_outputs() : -1);
}

// Reduce*: axes is an input from version 18 (attribute before); ReduceSum is converted in
// onnx_ops.cpp.
Result reduce(NodeContext& n) {
  if (n.opset() >= 18) {
    if (absl::Status s = n.check_inputs(1, 2); !s.ok()) return s;
    if (Ref* axes = n.runtime_input(1)) return n.emit(n.op_type(), {n.input(0), axes});
    if (absl::Status s = n.input_to_ints(1, "axes", "axes"); !s.ok()) return s;
  } else if (absl::Status s = n.check_inputs(1, 1); !s.ok()) {
    return s;
  }
  return n.emit(n.op_type(), {n.input(0)});
}

// Size: the element count of a statically shaped input, an i64 scalar.
Result size(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
  Tensor t = Tensor::scalar_i64(n.input(0)->type.numel());
  TensorType type = t.type();
  return std::vector<Ref>{Ref{kNoValue, std::move(t), std::move(type), n.name()}};
}

// BitCast: `to` is an ONNX element type number.
Result bit_cast(NodeContext& n) {
  auto to = n.take_attr("to");
  if (!to || !std::holds_alternative<int64_t>(*to)) return n.error("needs an integer 'to'");
  auto dtype = dtype_from_onnx(static_cast<int32_t>(std::get<int64_t>(*to)),
                               str_cat(n.op_type(), " '", n.name(), "': target type"));
  if (!dtype.ok()) return dtype.status();
  n.attrs()["to"] = std::string(dtype_name(*dtype));
  return generic(n);
}

// CastLike(input, target_type): Cast to target_type's element type.
Result cast_like(NodeContext& n) {
  if (absl::Status s = n.check_inputs(2, 2); !s.ok()) return s;
  n.take_attr("saturate");  // only affects float8 targets
  n.take_attr("round_mode");
  const DType to = n.input(1)->type.dtype;
  n.attrs()["to"] = std::string(dtype_name(to));
  const bool text = to == DType::str || n.input(0)->type.dtype == DType::str;
  return n.emit(text ? "CastString" : "Cast", {n.input(0)});
}

struct Entry {
  std::string_view op_type;
  OpConversion conversion;
};

constexpr Entry kConversions[] = {
    // logical and bitwise
    {"Not", {generic, 1, true}},
    {"And", {generic, 7, true}},
    {"Or", {generic, 7, true}},
    {"Xor", {generic, 7, true}},
    {"BitwiseNot", {generic, 18, true}},
    {"BitwiseAnd", {generic, 18, true}},
    {"BitwiseOr", {generic, 18, true}},
    {"BitwiseXor", {generic, 18, true}},
    {"BitShift", {generic, 11, true}},
    {"IsNaN", {generic, 9, true}},
    {"IsInf", {generic, 10, true}},
    {"GreaterOrEqual", {generic, 12, true}},
    {"LessOrEqual", {generic, 12, true}},
    // unary math
    {"Sin", {generic, 7, true}},
    {"Cos", {generic, 7, true}},
    {"Tan", {generic, 7, true}},
    {"Asin", {generic, 7, true}},
    {"Acos", {generic, 7, true}},
    {"Atan", {generic, 7, true}},
    {"Sinh", {generic, 9, true}},
    {"Cosh", {generic, 9, true}},
    {"Asinh", {generic, 9, true}},
    {"Acosh", {generic, 9, true}},
    {"Atanh", {generic, 9, true}},
    {"Floor", {generic, 6, true}},
    {"Ceil", {generic, 6, true}},
    {"Round", {generic, 11, true}},
    {"Sign", {generic, 9, true}},
    {"Softplus", {generic, 1, true}},
    {"Softsign", {generic, 1, true}},
    {"Mish", {generic, 18, true}},
    {"Elu", {generic, 6, true}},
    {"Celu", {generic, 12, true}},
    {"Selu", {generic, 6, true}},
    {"ThresholdedRelu", {generic, 10, true}},
    {"Shrink", {generic, 9, true}},
    {"Swish", {generic, 24, true}},
    // variadic and binary
    {"Max", {generic, 6, true}},
    {"Min", {generic, 6, true}},
    {"Sum", {generic, 6, true}},
    {"Mean", {generic, 6, true}},
    {"Mod", {generic, 10, true}},
    // reductions
    {"ReduceMin", {reduce, 1, true}},
    {"ReduceProd", {reduce, 1, true}},
    {"ReduceL1", {reduce, 1, true}},
    {"ReduceL2", {reduce, 1, true}},
    {"ReduceSumSquare", {reduce, 1, true}},
    {"ReduceLogSum", {reduce, 1, true}},
    {"ReduceLogSumExp", {reduce, 1, true}},
    {"ArgMax", {generic, 1, true}},
    {"ArgMin", {generic, 1, true}},
    // normalisations (Hardmax before version 13 flattens to 2-D: not handled)
    {"Hardmax", {generic, 13, true}},
    {"LpNormalization", {generic, 1, true}},
    {"RMSNormalization", {generic, 23, true}},
    {"MeanVarianceNormalization", {generic, 9, true}},
    {"LRN", {generic, 1, true}},
    {"GroupNormalization", {generic, 21, true}},
    {"Det", {generic, 11, true}},
    {"GlobalMaxPool", {generic, 1, true}},
    {"Attention", {generic, 23, true}},
    {"RotaryEmbedding", {generic, 23, true}},
    // losses
    {"NegativeLogLikelihoodLoss", {generic, 12, true}},
    {"SoftmaxCrossEntropyLoss", {generic, 12, true}},
    // no IR operator of their own
    {"Size", {size, 1, false}},
    {"CastLike", {cast_like, 15, false}},
    {"BitCast", {bit_cast, 26, true}},
};

}  // namespace

const OpConversion* find_elementwise_conversion(std::string_view op_type) {
  for (const Entry& e : kConversions)
    if (e.op_type == op_type) return &e.conversion;
  return nullptr;
}

}  // namespace collage::onnx_import
