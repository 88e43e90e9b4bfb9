// TE computes of the elementwise operators ONNX coverage added to the IR (see lib/ops/
// elementwise_math.cpp, elementwise_logic.cpp, elementwise_compare.cpp, elementwise_variadic.cpp):
// the trigonometric and hyperbolic functions, Floor, Ceil, Round, Sign, Shrink, the activations with parameters (Elu, Celu, Selu,
// ThresholdedRelu, Swish, Softplus, Softsign, Mish), IsNaN, IsInf, Not, And, Or, Xor,
// GreaterOrEqual, LessOrEqual, Mod, and Max, Min, Sum, Mean over any number of inputs.
// Floats are computed in f32 (f16 and bf16 widened), as the reference computes them.
#include <cmath>
#include <functional>

#include "collage/ops/math.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

// Which input dtypes an operator takes.
enum class Takes { floats, numeric, boolean };

bool takes(Takes what, DType t) {
  switch (what) {
    case Takes::floats: return is_float(t);
    case Takes::numeric: return t != DType::boolean;
    case Takes::boolean: return t == DType::boolean;
  }
  return false;
}

// out = f(node, loaded inputs) with numpy broadcasting over every input; float inputs are loaded
// as f32 and the result is cast to the output's dtype.
using ElementFn = std::function<Expr(const Node& node, const std::vector<Expr>& x, DType t)>;

TeOpDef elementwise(Takes what, ElementFn f) {
  return {[what, f](const Graph& g, const Node& node, std::span<const te::Tensor> in) -> Outputs {
    for (const te::Tensor& t : in)
      if (!t.defined() || !takes(what, t.dtype()))
        return node_error(node, str_cat("input dtype ",
                                        t.defined() ? dtype_name(t.dtype()) : "<none>",
                                        " is not supported"));
    const TensorType& out = output_type(g, node);
    const DType t = in[0].dtype();
    std::vector<te::Tensor> ins(in.begin(), in.end());
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          std::vector<Expr> x;
          for (const te::Tensor& tensor : ins) {
            Expr v = tensor(broadcast_index(tensor, i));
            x.push_back(is_float_like(t) ? cast_to(DType::f32, v) : v);
          }
          return cast_to(out.dtype, f(node, x, t));
        },
        tensor_name(node))};
  }, nullptr};
}

// A unary function of f32 values.
TeOpDef float_unary(std::function<Expr(const Node&, Expr)> f) {
  return elementwise(Takes::floats,
                     [f](const Node& n, const std::vector<Expr>& x, DType) { return f(n, x[0]); });
}

Expr f32(double v) { return te::make_const(DType::f32, v); }
Expr zero_of(const Expr& x) { return te::make_const(x.dtype(), 0); }

// log(1 + e^x) without overflow: x + log(1 + e^-x) for positive x.
Expr softplus(const Expr& x) {
  Expr ax = te::fabs(x);
  return te::maximum(x, f32(0)) + te::log(f32(1) + te::exp(f32(0) - ax));
}

float alpha_of(const Node& n) { return n.get<AlphaAttrs>().alpha; }

// Folds the inputs left to right with `f` (Max, Min, Sum); Mean divides by the count.
TeOpDef variadic(Takes what, std::function<Expr(Expr, Expr)> f, bool mean = false) {
  return elementwise(what, [f, mean](const Node&, const std::vector<Expr>& x, DType) {
    Expr acc = x[0];
    for (size_t k = 1; k < x.size(); ++k) acc = f(acc, x[k]);
    if (mean) acc = acc / f32(static_cast<double>(x.size()));
    return acc;
  });
}

Expr mod(const Node& n, const std::vector<Expr>& x, DType t) {
  // Floats: C's fmod (fmod must be 1; shape inference refuses 0). Integers: the divisor's sign
  // unless fmod, and 0 for a zero divisor (the reference refuses that input, generated code
  // cannot report it).
  if (is_float_like(t)) return te::mod(x[0], x[1]);
  return n.get<ModAttrs>().fmod != 0 ? te::mod(x[0], x[1]) : te::floormod(x[0], x[1]);
}

}  // namespace

void register_math_ops(TeOpRegistry& r) {
  r.add("Sin", float_unary([](const Node&, Expr x) { return te::sin(x); }));
  r.add("Cos", float_unary([](const Node&, Expr x) { return te::cos(x); }));
  r.add("Tan", float_unary([](const Node&, Expr x) { return te::tan(x); }));
  r.add("Asin", float_unary([](const Node&, Expr x) { return te::asin(x); }));
  r.add("Acos", float_unary([](const Node&, Expr x) { return te::acos(x); }));
  r.add("Atan", float_unary([](const Node&, Expr x) { return te::atan(x); }));
  r.add("Sinh", float_unary([](const Node&, Expr x) { return te::sinh(x); }));
  r.add("Cosh", float_unary([](const Node&, Expr x) { return te::cosh(x); }));
  r.add("Asinh", float_unary([](const Node&, Expr x) { return te::asinh(x); }));
  r.add("Acosh", float_unary([](const Node&, Expr x) { return te::acosh(x); }));
  r.add("Atanh", float_unary([](const Node&, Expr x) { return te::atanh(x); }));
  r.add("Floor", float_unary([](const Node&, Expr x) { return te::floor(x); }));
  r.add("Ceil", float_unary([](const Node&, Expr x) { return te::ceil(x); }));
  r.add("Round", float_unary([](const Node&, Expr x) { return te::round(x); }));
  r.add("Softplus", float_unary([](const Node&, Expr x) { return softplus(x); }));
  r.add("Softsign", float_unary([](const Node&, Expr x) { return x / (f32(1) + te::fabs(x)); }));
  r.add("Mish", float_unary([](const Node&, Expr x) { return x * te::tanh(softplus(x)); }));
  r.add("Elu", float_unary([](const Node& n, Expr x) {
          return te::select(x < f32(0), f32(alpha_of(n)) * (te::exp(x) - f32(1)), x);
        }));
  r.add("Celu", float_unary([](const Node& n, Expr x) {
          const double a = alpha_of(n);
          Expr neg = f32(a) * (te::exp(x / f32(a)) - f32(1));
          return te::maximum(x, f32(0)) + te::minimum(neg, f32(0));
        }));
  r.add("Selu", float_unary([](const Node& n, Expr x) {
          const auto& a = n.get<SeluAttrs>();
          return f32(a.gamma) *
                 te::select(x > f32(0), x, f32(a.alpha) * te::exp(x) - f32(a.alpha));
        }));
  r.add("ThresholdedRelu", float_unary([](const Node& n, Expr x) {
          return te::select(x > f32(alpha_of(n)), x, f32(0));
        }));
  r.add("Swish", float_unary([](const Node& n, Expr x) {
          return x / (f32(1) + te::exp(f32(-alpha_of(n)) * x));
        }));
  r.add("Sign", elementwise(Takes::numeric, [](const Node&, const std::vector<Expr>& x, DType) {
          Expr z = zero_of(x[0]), one = te::make_const(x[0].dtype(), 1);
          // NaN compares false both ways and stays NaN.
          return te::select(x[0] > z, one,
                            te::select(x[0] < z, z - one, te::select(x[0] == z, z, x[0])));
        }));
  r.add("Shrink", elementwise(Takes::numeric, [](const Node& n, const std::vector<Expr>& x,
                                                 DType t) {
          const auto& a = n.get<ShrinkAttrs>();
          // Integers go through f32 like the reference's double; exact for the values Shrink
          // takes in practice (|x| < 2^24).
          Expr v = is_float(t) ? x[0] : cast_to(DType::f32, x[0]);
          return te::select(v < f32(-a.lambd), v + f32(a.bias),
                            te::select(v > f32(a.lambd), v - f32(a.bias), f32(0)));
        }));
  r.add("IsNaN", float_unary([](const Node&, Expr x) { return x != x; }));
  r.add("IsInf", float_unary([](const Node& n, Expr x) {
          const auto& a = n.get<IsInfAttrs>();
          const Expr inf = f32(INFINITY);
          Expr pos = a.detect_positive ? x == inf : Expr(false);
          Expr neg = a.detect_negative ? x == f32(-INFINITY) : Expr(false);
          return pos || neg;
        }));
  r.add("Not", elementwise(Takes::boolean, [](const Node&, const std::vector<Expr>& x, DType) {
          return !x[0];
        }));
  r.add("And", elementwise(Takes::boolean, [](const Node&, const std::vector<Expr>& x, DType) {
          return x[0] && x[1];
        }));
  r.add("Or", elementwise(Takes::boolean, [](const Node&, const std::vector<Expr>& x, DType) {
          return x[0] || x[1];
        }));
  r.add("Xor", elementwise(Takes::boolean, [](const Node&, const std::vector<Expr>& x, DType) {
          return x[0] != x[1];
        }));
  r.add("GreaterOrEqual", elementwise(Takes::numeric, [](const Node&, const std::vector<Expr>& x,
                                                         DType) { return x[0] >= x[1]; }));
  r.add("LessOrEqual", elementwise(Takes::numeric, [](const Node&, const std::vector<Expr>& x,
                                                      DType) { return x[0] <= x[1]; }));
  r.add("Mod", elementwise(Takes::numeric, mod));
  r.add("Max", variadic(Takes::numeric, [](Expr a, Expr b) { return te::maximum(a, b); }));
  r.add("Min", variadic(Takes::numeric, [](Expr a, Expr b) { return te::minimum(a, b); }));
  r.add("Sum", variadic(Takes::floats, [](Expr a, Expr b) { return a + b; }));
  r.add("Mean", variadic(Takes::floats, [](Expr a, Expr b) { return a + b; }, /*mean=*/true));
}

}  // namespace collage::te_ops
