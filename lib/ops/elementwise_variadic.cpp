// Max, Min (numeric dtypes, NaN propagates), Sum and Mean (float dtypes) over any number of
// inputs with numpy broadcasting, and Mod (integer modulus with the divisor's sign, or C's fmod).
#include <cmath>
#include <cstring>

#include "collage/ops/math.h"
#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

template <TypeSet Allowed>
absl::Status infer_variadic(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  std::vector<int> all;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error(str_cat("input ", i, " is missing"));
    if (absl::Status s = check_dtype(ctx, i, Allowed); !s.ok()) return s;
    if (i > 0)
      if (absl::Status s = check_same_dtype(ctx, 0, i); !s.ok()) return s;
    all.push_back(i);
  }
  auto shape = broadcast_inputs(ctx, all);
  if (!shape.ok()) return shape.status();
  ctx.set_output(0, {ctx.input(0).dtype, *std::move(shape)});
  return absl::OkStatus();
}

// out = f(...f(f(in0, in1), in2)...); Mean divides by the input count at the end.
template <TypeSet Allowed, typename F>
OpDef variadic_op(std::string name, F f, bool mean = false) {
  OpDef d = make_op<NoAttrs>(
      std::move(name), FusionKind::broadcast, 1, -1, infer_variadic<Allowed>,
      [f, mean](const KernelArgs& args) {
        Tensor& out = args.outputs[0];
        return dispatch_codec<Allowed>(out.dtype(), [&](auto codec) {
          using C = decltype(codec);
          using T = typename C::Compute;
          const Tensor& first = args.inputs[0];
          if (args.inputs.size() == 1) {
            broadcast_binary<C, C, C>(first, first, out, [](T a, T) { return a; });
          } else {
            broadcast_binary<C, C, C>(first, args.inputs[1], out, f);
            for (size_t i = 2; i < args.inputs.size(); ++i)
              broadcast_binary<C, C, C>(out, args.inputs[i], out, f);
          }
          if (mean) {
            const T n = static_cast<T>(args.inputs.size());
            map_elements<C, C>(out, out, [n](T x) { return x / n; });
          }
        });
      });
  d.commutative = true;
  return d;
}

template <typename T>
T max_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? b : a;
}
template <typename T>
T min_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return b < a ? b : a;
}

absl::Status infer_mod(InferContext& ctx) {
  if (absl::Status s = infer_binary(ctx, kNumericTypes); !s.ok()) return s;
  if (is_float(ctx.input(0).dtype) && ctx.attrs<ModAttrs>().fmod == 0)
    return ctx.error("fmod must be 1 for floating-point inputs");
  return absl::OkStatus();
}

absl::Status mod_kernel(const KernelArgs& args) {
  const bool c_fmod = args.get<ModAttrs>().fmod != 0;
  return dispatch_codec<kNumericTypes>(args.inputs[0].dtype(), [&](auto codec) -> absl::Status {
    using C = decltype(codec);
    using T = typename C::Compute;
    if constexpr (std::is_integral_v<T>) {
      const Tensor& b = args.inputs[1];
      for (int64_t i = 0; args.outputs[0].numel() > 0 && i < b.numel(); ++i)
        if (b.get_as_int64(i) == 0)
          return absl::InvalidArgumentError(
              str_cat("integer modulus by zero (divisor element ", i, ")"));
      broadcast_binary<C, C, C>(args.inputs[0], b, args.outputs[0], [c_fmod](T x, T y) {
        if constexpr (std::is_signed_v<T>) {
          if (y == T(-1)) return T(0);  // x % -1 is 0, and INT_MIN % -1 would trap
          T m = static_cast<T>(x % y);
          if (!c_fmod && m != 0 && ((m < 0) != (y < 0))) m = static_cast<T>(m + y);
          return m;
        } else {
          return static_cast<T>(x % y);
        }
      });
    } else {
      broadcast_binary<C, C, C>(args.inputs[0], args.inputs[1], args.outputs[0],
                                [](T x, T y) { return std::fmod(x, y); });
    }
    return absl::OkStatus();
  });
}

}  // namespace

void register_variadic_ops(OpRegistry& r) {
  add_builtin_op(r, variadic_op<kNumericTypes>("Max", [](auto a, auto b) { return max_nan(a, b); }));
  add_builtin_op(r, variadic_op<kNumericTypes>("Min", [](auto a, auto b) { return min_nan(a, b); }));
  add_builtin_op(r, variadic_op<kFloatTypes>("Sum", [](auto a, auto b) { return a + b; }));
  add_builtin_op(r,
                 variadic_op<kFloatTypes>("Mean", [](auto a, auto b) { return a + b; }, true));
  add_builtin_op(r, make_op<ModAttrs>("Mod", FusionKind::broadcast, 2, 2, infer_mod, mod_kernel));
}

}  // namespace collage::ops
