// TE computes of the bit operators (lib/ops/elementwise_logic.cpp, elementwise_cast.cpp):
// BitwiseAnd, BitwiseOr, BitwiseXor and BitShift with numpy broadcasting, BitwiseNot, and
// BitCast, the bits of each element read as another type of the same width.
#include "collage/ops/math.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;
using BitFn = Expr (*)(Expr, Expr);

absl::Status require_integers(const Node& node, std::span<const te::Tensor> in) {
  for (const te::Tensor& t : in)
    if (!t.defined() || is_float(t.dtype()) || t.dtype() == DType::boolean ||
        t.dtype() == DType::str)
      return node_error(node, str_cat("input dtype ",
                                      t.defined() ? dtype_name(t.dtype()) : "<none>",
                                      " is not an integer type"));
  return absl::OkStatus();
}

Outputs bit_binary(const Graph& g, const Node& node, std::span<const te::Tensor> in, BitFn f) {
  if (absl::Status s = require_integers(node, in); !s.ok()) return s;
  te::Tensor a = in[0], b = in[1];
  return std::vector<te::Tensor>{te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) {
        return f(a(broadcast_index(a, i)), b(broadcast_index(b, i)));
      },
      tensor_name(node))};
}

TeOpDef bit_op(BitFn f) {
  return {[f](const Graph& g, const Node& node, std::span<const te::Tensor> in) {
            return bit_binary(g, node, in, f);
          },
          nullptr};
}

Outputs bitwise_not(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  if (absl::Status s = require_integers(node, in); !s.ok()) return s;
  te::Tensor x = in[0];
  return std::vector<te::Tensor>{te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) {
        return te::bit_not(x(std::vector<Expr>(i.begin(), i.end())));
      },
      tensor_name(node))};
}

Outputs bit_shift(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const bool left = node.get<BitShiftAttrs>().direction == "LEFT";
  return bit_binary(g, node, in, left ? &te::shift_left : &te::shift_right);
}

// Bool takes one byte, but generated code holds it as one bit: BitCast to bool would lose the
// other bits, so only BitCast from bool (to an 8-bit integer, 0 or 1) is generated.
Outputs bit_cast(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  const TensorType& out = output_type(g, node);
  if (out.dtype == DType::boolean || out.dtype == DType::str || x.dtype() == DType::str)
    return node_error(node, str_cat("BitCast from ", dtype_name(x.dtype()), " to ",
                                    dtype_name(out.dtype), " is not generated"));
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr v = x(std::vector<Expr>(i.begin(), i.end()));
        return x.dtype() == DType::boolean ? te::cast(out.dtype, v) : te::reinterpret(out.dtype, v);
      },
      tensor_name(node))};
}

}  // namespace

void register_bitwise_ops(TeOpRegistry& r) {
  r.add("BitwiseAnd", bit_op(&te::bit_and));
  r.add("BitwiseOr", bit_op(&te::bit_or));
  r.add("BitwiseXor", bit_op(&te::bit_xor));
  r.add("BitwiseNot", {bitwise_not, nullptr});
  r.add("BitShift", {bit_shift, nullptr});
  r.add("BitCast", {bit_cast, nullptr});
}

}  // namespace collage::te_ops
