// Binary arithmetic with numpy broadcasting: Add, Sub, Mul, Div on float and signed integer
// dtypes (integers wrap on overflow, division truncates toward zero) and Pow.
#include <cmath>

#include "dyn_int_pow.h"
#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

constexpr TypeSet kPowBaseTypes = kFloatTypes | type_bit(DType::i32) | type_bit(DType::i64);

// An operator out = f(a, b) over same-dtype inputs in `Allowed`.
template <TypeSet Allowed, typename F>
OpDef binary_op(std::string name, F f, bool commutative) {
  OpDef d = make_op<NoAttrs>(
      std::move(name), FusionKind::broadcast, 2, 2,
      [](InferContext& ctx) { return infer_binary(ctx, Allowed); },
      [f](const KernelArgs& args) {
        return dispatch_codec<Allowed>(args.inputs[0].dtype(), [&](auto codec) {
          using C = decltype(codec);
          broadcast_binary<C, C, C>(args.inputs[0], args.inputs[1], args.outputs[0], f);
        });
      });
  d.commutative = commutative;
  return d;
}

absl::Status div_kernel(const KernelArgs& args) {
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  Tensor& out = args.outputs[0];
  return dispatch_codec<kNumericTypes>(a.dtype(), [&](auto codec) -> absl::Status {
    using C = decltype(codec);
    using T = typename C::Compute;
    if constexpr (std::is_integral_v<T>) {
      // Integer division by zero has no value (ONNX Runtime traps); refuse it instead.
      const T* pb = b.data<T>();
      for (int64_t i = 0; out.numel() > 0 && i < b.numel(); ++i) {
        if (pb[i] == 0)
          return absl::InvalidArgumentError(
              str_cat("integer division by zero (divisor element ", i, ")"));
      }
      // x / -1 is negation, which wraps for the most negative value instead of trapping.
      broadcast_binary<C, C, C>(a, b, out,
                                [](T x, T y) { return y == T(-1) ? wrap_neg(x) : T(x / y); });
    } else {
      broadcast_binary<C, C, C>(a, b, out, [](T x, T y) { return x / y; });
    }
    return absl::OkStatus();
  });
}

template <typename B, typename E>
B pow_value(B x, E y) {
  if constexpr (std::is_integral_v<B> && std::is_integral_v<E>) {
    return rt_dynamic::int_pow(x, static_cast<int64_t>(y));
  } else if constexpr (std::is_integral_v<B>) {
    return convert_value<B>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  } else {
    return static_cast<B>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  }
}

absl::Status infer_pow(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kPowBaseTypes); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 1, kNumericTypes); !s.ok()) return s;
  absl::StatusOr<Shape> shape = broadcast_inputs(ctx, {0, 1});
  if (!shape.ok()) return shape.status();
  ctx.set_output(0, TensorType{ctx.input(0).dtype, std::move(*shape)});
  return absl::OkStatus();
}

absl::Status pow_kernel(const KernelArgs& args) {
  const Tensor& base = args.inputs[0];
  const Tensor& exponent = args.inputs[1];
  Tensor& out = args.outputs[0];
  return dispatch_codec<kPowBaseTypes>(base.dtype(), [&](auto base_codec) -> absl::Status {
    using CB = decltype(base_codec);
    using B = typename CB::Compute;
    if constexpr (std::is_floating_point_v<B>) {
      // Squares and cubes (LayerNorm and GELU decompositions) skip pow(). A one-element
      // exponent leaves the base's element order unchanged, whatever the broadcast rank.
      if (exponent.numel() == 1) {
        const double y = exponent.get_as_double(0);
        if (y == 2.0) {
          map_elements<CB, CB>(base, out, [](B x) { return x * x; });
          return absl::OkStatus();
        }
        if (y == 3.0) {
          map_elements<CB, CB>(base, out, [](B x) { return x * x * x; });
          return absl::OkStatus();
        }
      }
    }
    return dispatch_codec<kNumericTypes>(exponent.dtype(), [&](auto exp_codec) {
      using CE = decltype(exp_codec);
      broadcast_binary<CB, CE, CB>(base, exponent, out, pow_value<B, typename CE::Compute>);
    });
  });
}

}  // namespace

void register_binary_arith_ops(OpRegistry& r) {
  add_builtin_op(r, binary_op<kNumericTypes>(
                        "Add", [](auto a, auto b) { return wrap_add(a, b); }, true));
  add_builtin_op(r, binary_op<kNumericTypes>(
                        "Sub", [](auto a, auto b) { return wrap_sub(a, b); }, false));
  add_builtin_op(r, binary_op<kNumericTypes>(
                        "Mul", [](auto a, auto b) { return wrap_mul(a, b); }, true));
  add_builtin_op(
      r, make_op<NoAttrs>(
             "Div", FusionKind::broadcast, 2, 2,
             [](InferContext& ctx) { return infer_binary(ctx, kNumericTypes); }, div_kernel));
  add_builtin_op(r, make_op<NoAttrs>("Pow", FusionKind::broadcast, 2, 2, infer_pow, pow_kernel));
}

}  // namespace collage::ops
