// TE computes of the elementwise operators: activations and math functions, binary arithmetic
// and comparisons with numpy broadcasting, Where, Cast, Identity and Dropout.
#include <cmath>
#include <functional>
#include <utility>

#include "collage/ops/elementwise.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;

// f(x) with x loaded in its compute type (f16/bf16 widened to f32); `t` is the input's dtype.
using UnaryFn = std::function<Expr(const Node& node, Expr x, DType t)>;

// An elementwise operator out = f(x). `float_only` refuses integer inputs (f64 computes in f64,
// f16 and bf16 in f32).
TeOpDef unary(UnaryFn f, bool float_only) {
  return {[f, float_only](const Graph& g, const Node& node,
                          std::span<const te::Tensor> in) -> absl::StatusOr<std::vector<te::Tensor>> {
    const DType t = in[0].dtype();
    if (t == DType::boolean || (float_only && !is_float(t)))
      return node_error(node, str_cat("input dtype ", dtype_name(t), " is not supported"));
    const TensorType& out = output_type(g, node);
    te::Tensor x = in[0];
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          Expr v = x(std::vector<Expr>(i.begin(), i.end()));
          if (is_float_like(t)) v = cast_to(DType::f32, v);
          return cast_to(out.dtype, f(node, v, t));
        },
        tensor_name(node))};
  }, nullptr};
}

using BinaryFn = std::function<Expr(Expr a, Expr b, DType t)>;

// out = f(a, b) with numpy broadcasting; `t` is the first input's dtype.
TeOpDef binary(BinaryFn f, bool allow_bool = false) {
  return {[f, allow_bool](const Graph& g, const Node& node,
                          std::span<const te::Tensor> in) -> absl::StatusOr<std::vector<te::Tensor>> {
    const DType t = in[0].dtype();
    if (t == DType::boolean && !allow_bool)
      return node_error(node, "bool inputs are not supported");
    const TensorType& out = output_type(g, node);
    te::Tensor a = in[0], b = in[1];
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          Expr x = a(broadcast_index(a, i)), y = b(broadcast_index(b, i));
          if (is_float_like(a.dtype())) x = cast_to(DType::f32, x);
          if (is_float_like(b.dtype())) y = cast_to(DType::f32, y);
          return cast_to(out.dtype, f(x, y, t));
        },
        tensor_name(node))};
  }, nullptr};
}

Expr f32(double v) { return te::make_const(DType::f32, v); }

Expr zero_of(const Expr& x) { return te::make_const(x.dtype(), 0); }

Expr clamp01(const Expr& x) { return te::minimum(te::maximum(x, f32(0)), f32(1)); }

Expr int_div(Expr a, Expr b) {
  // Division by zero gives 0 and x / -1 wraps, instead of trapping.
  Expr one = te::make_const(b.dtype(), 1);
  Expr safe = te::select(b == zero_of(b), one, b);
  if (is_unsigned(b.dtype())) return te::select(b == zero_of(b), zero_of(a), te::div(a, safe));
  return te::select(b == zero_of(b), zero_of(a),
                    te::select(b == te::make_const(b.dtype(), -1), zero_of(a) - a, te::div(a, safe)));
}

// Range of an integer dtype, as doubles.
std::pair<double, double> int_range(DType t) {
  switch (t) {
    case DType::i8: return {-128.0, 127.0};
    case DType::i16: return {-32768.0, 32767.0};
    case DType::i32: return {-2147483648.0, 2147483647.0};
    case DType::u8: return {0.0, 255.0};
    case DType::u16: return {0.0, 65535.0};
    case DType::u32: return {0.0, 4294967295.0};
    case DType::u64: return {0.0, 18446744073709549568.0};  // the largest double below 2^64
    default: return {-9.2233720368547758e18, 9.2233720368547748e18};
  }
}

// Clip bound for an integer dtype: [ceil(lo), floor(hi)] saturated to the dtype's range.
Expr int_bound(float v, bool lower, DType t) {
  double b = lower ? std::ceil(static_cast<double>(v)) : std::floor(static_cast<double>(v));
  const auto [lo, hi] = int_range(t);
  b = std::isnan(b) ? 0 : std::min(std::max(b, lo), hi);
  // u64's upper half goes in as its bit pattern.
  return te::make_int(t, b >= 9.2233720368547758e18 ? static_cast<int64_t>(static_cast<uint64_t>(b))
                                                    : static_cast<int64_t>(b));
}

TeOpDef copy_op() {
  return {[](const Graph& g, const Node& node,
             std::span<const te::Tensor> in) -> absl::StatusOr<std::vector<te::Tensor>> {
    std::vector<te::Tensor> outs;
    te::Tensor x = in[0];
    outs.push_back(te::compute(
        output_type(g, node).shape,
        [&](const std::vector<te::Var>& i) { return x(std::vector<Expr>(i.begin(), i.end())); },
        tensor_name(node)));
    // Dropout's optional mask: all true in inference.
    for (size_t o = 1; o < node.outputs.size(); ++o)
      outs.push_back(te::compute(
          output_type(g, node, static_cast<int>(o)).shape,
          [](const std::vector<te::Var>&) { return Expr(true); }, tensor_name(node, o)));
    return outs;
  }, nullptr};
}

}  // namespace

void register_elementwise_ops(TeOpRegistry& r) {
  r.add("Relu", unary([](const Node&, Expr x, DType) {
          return te::select(x < zero_of(x), zero_of(x), x);
        }, false));
  r.add("Neg", unary([](const Node&, Expr x, DType) { return zero_of(x) - x; }, false));
  r.add("Abs", unary([](const Node&, Expr x, DType t) {
          return is_float(t) ? te::fabs(x) : te::select(x < zero_of(x), zero_of(x) - x, x);
        }, false));
  r.add("Sigmoid", unary([](const Node&, Expr x, DType) { return te::sigmoid(x); }, true));
  r.add("Tanh", unary([](const Node&, Expr x, DType) { return te::tanh(x); }, true));
  r.add("Erf", unary([](const Node&, Expr x, DType) { return te::erf(x); }, true));
  r.add("Exp", unary([](const Node&, Expr x, DType) { return te::exp(x); }, true));
  r.add("Log", unary([](const Node&, Expr x, DType) { return te::log(x); }, true));
  r.add("Sqrt", unary([](const Node&, Expr x, DType) { return te::sqrt(x); }, true));
  r.add("Reciprocal", unary([](const Node&, Expr x, DType) { return f32(1) / x; }, true));
  r.add("LeakyRelu", unary([](const Node& n, Expr x, DType) {
          return te::select(x < f32(0), f32(n.get<LeakyReluAttrs>().alpha) * x, x);
        }, true));
  r.add("HardSigmoid", unary([](const Node& n, Expr x, DType) {
          const auto& a = n.get<HardSigmoidAttrs>();
          return clamp01(f32(a.alpha) * x + f32(a.beta));
        }, true));
  r.add("HardSwish", unary([](const Node&, Expr x, DType) {
          return x * clamp01(x * f32(1.0 / 6.0) + f32(0.5));
        }, true));
  r.add("Gelu", unary([](const Node& n, Expr x, DType) {
          if (n.get<GeluAttrs>().approximate == "tanh")
            return f32(0.5) * x *
                   (f32(1) + te::tanh(f32(std::sqrt(2.0 / M_PI)) * (x + f32(0.044715) * x * x * x)));
          return f32(0.5) * x * (f32(1) + te::erf(x * f32(M_SQRT1_2)));
        }, true));
  r.add("Clip", unary([](const Node& n, Expr x, DType t) {
          const auto& a = n.get<ClipAttrs>();
          if (is_float(t)) {
            Expr v = x;
            if (std::isfinite(a.min) || a.min > 0) v = te::maximum(v, f32(a.min));
            if (std::isfinite(a.max) || a.max < 0) v = te::minimum(v, f32(a.max));
            return v;
          }
          return te::minimum(te::maximum(x, int_bound(a.min, true, t)), int_bound(a.max, false, t));
        }, false));

  r.add("Add", binary([](Expr a, Expr b, DType) { return a + b; }));
  r.add("Sub", binary([](Expr a, Expr b, DType) { return a - b; }));
  r.add("Mul", binary([](Expr a, Expr b, DType) { return a * b; }));
  r.add("Div", binary([](Expr a, Expr b, DType t) {
          return is_float(t) ? a / b : int_div(a, b);
        }));
  r.add("PRelu", binary([](Expr x, Expr s, DType) { return te::select(x < zero_of(x), s * x, x); }));
  r.add("Equal", binary([](Expr a, Expr b, DType) { return a == b; }, /*allow_bool=*/true));
  r.add("Less", binary([](Expr a, Expr b, DType) { return a < b; }));
  r.add("Greater", binary([](Expr a, Expr b, DType) { return a > b; }));
  r.add("Pow", {[](const Graph& g, const Node& node,
                   std::span<const te::Tensor> in) -> absl::StatusOr<std::vector<te::Tensor>> {
          const DType base = in[0].dtype(), exponent = in[1].dtype();
          if (!is_float_like(base)) {
            // An integer base to a float power: pow in f64, saturated to the base's type, as
            // the reference computes it. Integer powers wrap, which this does not.
            if (!is_integer(base) || !is_float(exponent))
              return node_error(node, str_cat("base ", dtype_name(base), " to an exponent of ",
                                              dtype_name(exponent),
                                              " is not supported (float bases, or integer "
                                              "bases to float exponents)"));
            return binary([](Expr a, Expr b, DType t) {
                     return cast_to(t, te::pow(cast_to(DType::f64, a), cast_to(DType::f64, b)));
                   }).compute(g, node, in);
          }
          return binary([](Expr a, Expr b, DType) {
                   return te::pow(a, cast_to(DType::f32, b));
                 }).compute(g, node, in);
        }, nullptr});
  r.add("Where", {[](const Graph& g, const Node& node,
                     std::span<const te::Tensor> in) -> absl::StatusOr<std::vector<te::Tensor>> {
          const TensorType& out = output_type(g, node);
          te::Tensor c = in[0], x = in[1], y = in[2];
          return std::vector<te::Tensor>{te::compute(
              out.shape,
              [&](const std::vector<te::Var>& i) {
                // select computes 16-bit floats in f32: the output has the node's type.
                return cast_to(out.dtype,
                               te::select(cast_to(DType::boolean, c(broadcast_index(c, i))),
                                          x(broadcast_index(x, i)), y(broadcast_index(y, i))));
              },
              tensor_name(node))};
        }, nullptr});
  r.add("Cast", {[](const Graph& g, const Node& node,
                    std::span<const te::Tensor> in) -> absl::StatusOr<std::vector<te::Tensor>> {
          const TensorType& out = output_type(g, node);
          te::Tensor x = in[0];
          return std::vector<te::Tensor>{te::compute(
              out.shape,
              [&](const std::vector<te::Var>& i) {
                Expr v = x(std::vector<Expr>(i.begin(), i.end()));
                // Through f32, so that f16 <-> bf16 and float -> int go by the float value.
                if (is_float_like(x.dtype()) && x.dtype() != out.dtype) v = cast_to(DType::f32, v);
                return cast_to(out.dtype, v);
              },
              tensor_name(node))};
        }, nullptr});
  r.add("Identity", copy_op());
  r.add("Dropout", copy_op());
}

}  // namespace collage::te_ops
