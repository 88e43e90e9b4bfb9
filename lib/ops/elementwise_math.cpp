// Unary math on float dtypes (trigonometric and hyperbolic functions, Floor, Ceil, Round,
// Softplus, Softsign, Mish and the activations with parameters: Elu, Celu, Selu,
// ThresholdedRelu, Swish), computed in float (double for f64); Sign and Shrink on numeric dtypes.
#include <cmath>

#include "collage/ops/math.h"
#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

template <typename F>
auto plain(F f) {
  return [f](const NoAttrs&) { return f; };
}

template <typename T>
T softplus(T x) {
  // log(1 + e^x) without overflow: x + log1p(e^-x) for positive x.
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

void add_float_unary(OpRegistry& r, std::string name, auto f) {
  add_builtin_op(r, unary_op<kFloatTypes, NoAttrs>(std::move(name), plain(f)));
}

}  // namespace

void register_math_ops(OpRegistry& r) {
  add_float_unary(r, "Sin", [](auto x) { return std::sin(x); });
  add_float_unary(r, "Cos", [](auto x) { return std::cos(x); });
  add_float_unary(r, "Tan", [](auto x) { return std::tan(x); });
  add_float_unary(r, "Asin", [](auto x) { return std::asin(x); });
  add_float_unary(r, "Acos", [](auto x) { return std::acos(x); });
  add_float_unary(r, "Atan", [](auto x) { return std::atan(x); });
  add_float_unary(r, "Sinh", [](auto x) { return std::sinh(x); });
  add_float_unary(r, "Cosh", [](auto x) { return std::cosh(x); });
  add_float_unary(r, "Asinh", [](auto x) { return std::asinh(x); });
  add_float_unary(r, "Acosh", [](auto x) { return std::acosh(x); });
  add_float_unary(r, "Atanh", [](auto x) { return std::atanh(x); });
  add_float_unary(r, "Floor", [](auto x) { return std::floor(x); });
  add_float_unary(r, "Ceil", [](auto x) { return std::ceil(x); });
  // Halves round to even (the default rounding mode), as ONNX asks.
  add_float_unary(r, "Round", [](auto x) { return std::nearbyint(x); });
  add_float_unary(r, "Softplus", [](auto x) { return softplus(x); });
  add_float_unary(r, "Softsign", [](auto x) { return x / (decltype(x)(1) + std::fabs(x)); });
  add_float_unary(r, "Mish", [](auto x) { return x * std::tanh(softplus(x)); });
  add_builtin_op(r, unary_op<kFloatTypes, AlphaAttrs>("Elu", [](const AlphaAttrs& a) {
                   return [alpha = a.alpha](auto x) {
                     using T = decltype(x);
                     return x < T(0) ? T(alpha) * (std::exp(x) - T(1)) : x;
                   };
                 }));
  add_builtin_op(r, unary_op<kFloatTypes, AlphaAttrs>("Celu", [](const AlphaAttrs& a) {
                   return [alpha = a.alpha](auto x) {
                     using T = decltype(x);
                     const T neg = T(alpha) * (std::exp(x / T(alpha)) - T(1));
                     return std::max(T(0), x) + std::min(T(0), neg);
                   };
                 }));
  add_builtin_op(r, unary_op<kFloatTypes, SeluAttrs>("Selu", [](const SeluAttrs& a) {
                   return [alpha = a.alpha, gamma = a.gamma](auto x) {
                     using T = decltype(x);
                     return T(gamma) * (x > T(0) ? x : T(alpha) * std::exp(x) - T(alpha));
                   };
                 }));
  add_builtin_op(r, unary_op<kFloatTypes, AlphaAttrs>("ThresholdedRelu", [](const AlphaAttrs& a) {
                   return [alpha = a.alpha](auto x) {
                     using T = decltype(x);
                     return x > T(alpha) ? x : T(0);
                   };
                 }));
  add_builtin_op(r, unary_op<kFloatTypes, AlphaAttrs>("Swish", [](const AlphaAttrs& a) {
                   return [alpha = a.alpha](auto x) {
                     using T = decltype(x);
                     return x / (T(1) + std::exp(-T(alpha) * x));
                   };
                 }));
  add_builtin_op(r, unary_op<kNumericTypes, NoAttrs>("Sign", plain([](auto x) {
                   using T = decltype(x);
                   if constexpr (std::is_unsigned_v<T>) {
                     return T(x > T(0));
                   } else if constexpr (std::is_floating_point_v<T>) {
                     return std::isnan(x) ? x : T((x > T(0)) - (x < T(0)));
                   } else {
                     return T((x > T(0)) - (x < T(0)));
                   }
                 })));
  add_builtin_op(r, unary_op<kNumericTypes, ShrinkAttrs>("Shrink", [](const ShrinkAttrs& a) {
                   return [bias = static_cast<double>(a.bias),
                           lambd = static_cast<double>(a.lambd)](auto x) {
                     using T = decltype(x);
                     const double v = static_cast<double>(x);
                     return v < -lambd ? T(v + bias) : v > lambd ? T(v - bias) : T(0);
                   };
                 }));
}

}  // namespace collage::ops
