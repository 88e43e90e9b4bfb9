// Activations with attributes or a second operand: LeakyRelu, PRelu, HardSigmoid, HardSwish,
// Gelu (erf and tanh forms) and Clip. NaN inputs stay NaN.
#include <cmath>

#include "collage/ops/elementwise.h"
#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

constexpr TypeSet kPReluTypes = kFloatTypes | type_bit(DType::i32) | type_bit(DType::i64);

float clamp01(float v) {
  return blend(v < 0.f, 0.f, blend(v > 1.f, 1.f, v));
}

absl::Status infer_gelu(InferContext& ctx) {
  const std::string& mode = ctx.attrs<GeluAttrs>().approximate;
  if (mode != "none" && mode != "tanh")
    return ctx.error(
        str_cat("attribute 'approximate' is \"", mode, "\", expected \"none\" or \"tanh\""));
  return infer_unary(ctx, kFloatTypes);
}

// Both forms are written without 1 + f(x) for f near -1, which would cancel for negative x:
// 1 + erf(x / sqrt 2) = erfc(-x / sqrt 2) and 1 + tanh(z) = 2 / (1 + exp(-2z)).
float gelu_erf(float x) {
  return 0.5f * x * std::erfc(x * -0.70710678118654752f);
}

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286536f;
  const float z = kSqrt2OverPi * (x + 0.044715f * x * x * x);
  return x / (1.f + std::exp(-2.f * z));
}

// Clip bound for an integer dtype: the integers inside [lo, hi] are [ceil(lo), floor(hi)],
// saturated to the dtype's range.
template <typename T>
T int_bound(float v, bool lower) {
  return convert_value<T>(lower ? std::ceil(v) : std::floor(v));
}

absl::Status infer_prelu(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kPReluTypes); !s.ok()) return s;
  if (absl::Status s = check_same_dtype(ctx, 0, 1); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  const Shape& slope = ctx.input(1).shape;
  std::optional<Shape> b = broadcast_shapes(x, slope);
  if (!b || *b != x)
    return ctx.error(str_cat("slope shape ", shape_to_string(slope),
                             " does not broadcast to input shape ", shape_to_string(x)));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status prelu_kernel(const KernelArgs& args) {
  return dispatch_codec<kPReluTypes>(args.inputs[0].dtype(), [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::Compute;
    broadcast_binary<C, C, C>(args.inputs[0], args.inputs[1], args.outputs[0],
                              [](T x, T s) { return blend(x < T(0), wrap_mul(x, s), x); });
  });
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  add_builtin_op(r, unary_op<kFloatTypes, LeakyReluAttrs>("LeakyRelu", [](const LeakyReluAttrs& a) {
                   return [alpha = a.alpha](float x) { return blend(x < 0.f, alpha * x, x); };
                 }));
  add_builtin_op(
      r, unary_op<kFloatTypes, HardSigmoidAttrs>("HardSigmoid", [](const HardSigmoidAttrs& a) {
        return [alpha = a.alpha, beta = a.beta](float x) { return clamp01(alpha * x + beta); };
      }));
  // ONNX defines HardSwish as x * HardSigmoid(x) with alpha = 1/6, beta = 0.5.
  add_builtin_op(r, unary_op<kFloatTypes, NoAttrs>("HardSwish", [](const NoAttrs&) {
                   return [](float x) { return x * clamp01(x * (1.f / 6.f) + 0.5f); };
                 }));
  add_builtin_op(r, unary_op<kFloatTypes, GeluAttrs>(
                        "Gelu",
                        [](const GeluAttrs& a) {
                          return [tanh_form = a.approximate == "tanh"](float x) {
                            return tanh_form ? gelu_tanh(x) : gelu_erf(x);
                          };
                        },
                        infer_gelu));
  add_builtin_op(r, unary_op<kNumericTypes, ClipAttrs>("Clip", [](const ClipAttrs& a) {
                   return [lo = a.min, hi = a.max](auto x) {
                     using T = decltype(x);
                     T l, h;
                     if constexpr (std::is_integral_v<T>) {
                       l = int_bound<T>(lo, true);
                       h = int_bound<T>(hi, false);
                     } else {
                       l = lo;
                       h = hi;
                     }
                     // When min > max every element becomes max, as ONNX specifies.
                     const T y = blend(x < l, l, x);
                     return blend(y > h, h, y);
                   };
                 }));
  add_builtin_op(r,
                 make_op<NoAttrs>("PRelu", FusionKind::broadcast, 2, 2, infer_prelu, prelu_kernel));
}

}  // namespace collage::ops
