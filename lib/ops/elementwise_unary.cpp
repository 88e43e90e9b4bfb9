// Unary math operators without attributes: Relu, Neg, Abs (numeric dtypes) and Sigmoid, Tanh,
// Erf, Exp, Log, Sqrt, Reciprocal (float dtypes, computed in float).
#include <cmath>

#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

// Wraps an element function as the attribute-free factory unary_op expects.
template <typename F>
auto plain(F f) {
  return [f](const NoAttrs&) { return f; };
}

float sigmoid(float x) {
  // exp of a non-positive argument only, so large |x| neither overflows nor loses the tail:
  // 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = exp(-|x|).
  const float e = std::exp(-std::fabs(x));
  return blend(x >= 0.f, 1.f, e) / (1.f + e);
}

}  // namespace

void register_unary_math_ops(OpRegistry& r) {
  // NaN stays NaN through Relu (x < 0 is false).
  add_builtin_op(r, unary_op<kNumericTypes, NoAttrs>("Relu", plain([](auto x) {
                                                       using T = decltype(x);
                                                       return blend(x < T(0), T(0), x);
                                                     })));
  add_builtin_op(
      r, unary_op<kNumericTypes, NoAttrs>("Neg", plain([](auto x) { return wrap_neg(x); })));
  add_builtin_op(r, unary_op<kNumericTypes, NoAttrs>("Abs", plain([](auto x) {
                                                       using T = decltype(x);
                                                       if constexpr (std::is_integral_v<T>) {
                                                         return blend(x < T(0), wrap_neg(x), x);
                                                       } else {
                                                         return std::fabs(x);
                                                       }
                                                     })));
  add_builtin_op(r, unary_op<kFloatTypes, NoAttrs>("Sigmoid", plain(sigmoid)));
  add_builtin_op(
      r, unary_op<kFloatTypes, NoAttrs>("Tanh", plain([](float x) { return std::tanh(x); })));
  add_builtin_op(r,
                 unary_op<kFloatTypes, NoAttrs>("Erf", plain([](float x) { return std::erf(x); })));
  add_builtin_op(r,
                 unary_op<kFloatTypes, NoAttrs>("Exp", plain([](float x) { return std::exp(x); })));
  add_builtin_op(r,
                 unary_op<kFloatTypes, NoAttrs>("Log", plain([](float x) { return std::log(x); })));
  add_builtin_op(
      r, unary_op<kFloatTypes, NoAttrs>("Sqrt", plain([](float x) { return std::sqrt(x); })));
  add_builtin_op(
      r, unary_op<kFloatTypes, NoAttrs>("Reciprocal", plain([](float x) { return 1.f / x; })));
}

}  // namespace collage::ops
