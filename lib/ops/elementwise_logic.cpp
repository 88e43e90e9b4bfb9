// Logical and bitwise operators: Not, And, Or, Xor (bool), BitwiseNot/And/Or/Xor (integers),
// BitShift (unsigned integers), IsNaN and IsInf (floats to bool); binary ones broadcast.
#include <cmath>

#include "collage/ops/math.h"
#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

constexpr TypeSet kBool = type_bit(DType::boolean);

template <TypeSet Allowed, typename F>
OpDef logic_binary(std::string name, F f) {
  OpDef d = make_op<NoAttrs>(
      std::move(name), FusionKind::broadcast, 2, 2,
      [](InferContext& ctx) { return infer_binary(ctx, Allowed); },
      [f](const KernelArgs& args) {
        return dispatch_codec<Allowed>(args.inputs[0].dtype(), [&](auto codec) {
          using C = decltype(codec);
          broadcast_binary<C, C, C>(args.inputs[0], args.inputs[1], args.outputs[0], f);
        });
      });
  d.commutative = true;
  return d;
}

absl::Status infer_bitshift(InferContext& ctx) {
  const auto& a = ctx.attrs<BitShiftAttrs>();
  if (a.direction != "LEFT" && a.direction != "RIGHT")
    return ctx.error(str_cat("direction is '", a.direction, "', expected LEFT or RIGHT"));
  return infer_binary(ctx, kUnsignedIntTypes);
}

absl::Status bitshift_kernel(const KernelArgs& args) {
  const bool left = args.get<BitShiftAttrs>().direction == "LEFT";
  return dispatch_codec<kUnsignedIntTypes>(args.inputs[0].dtype(), [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::Compute;
    broadcast_binary<C, C, C>(args.inputs[0], args.inputs[1], args.outputs[0], [left](T x, T n) {
      if (n >= sizeof(T) * 8) return T(0);
      return left ? T(x << n) : T(x >> n);
    });
  });
}

// A float -> bool test.
template <typename A, typename MakeFn>
OpDef float_test(std::string name, MakeFn make_fn) {
  return make_op<A>(
      std::move(name), FusionKind::elementwise, 1, 1,
      [](InferContext& ctx) {
        if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
        if (absl::Status s = check_dtype(ctx, 0, kFloatTypes); !s.ok()) return s;
        ctx.set_output(0, {DType::boolean, ctx.input(0).shape});
        return absl::OkStatus();
      },
      [make_fn](const KernelArgs& args) {
        const auto fn = make_fn(args.get<A>());
        return dispatch_codec<kFloatTypes>(args.inputs[0].dtype(), [&](auto codec) {
          map_elements<decltype(codec), BoolCodec>(args.inputs[0], args.outputs[0], fn);
        });
      });
}

}  // namespace

void register_logic_ops(OpRegistry& r) {
  add_builtin_op(r, unary_op<kBool, NoAttrs>("Not", [](const NoAttrs&) {
                   return [](bool x) { return !x; };
                 }));
  add_builtin_op(r, logic_binary<kBool>("And", [](bool a, bool b) { return a && b; }));
  add_builtin_op(r, logic_binary<kBool>("Or", [](bool a, bool b) { return a || b; }));
  add_builtin_op(r, logic_binary<kBool>("Xor", [](bool a, bool b) { return a != b; }));
  add_builtin_op(r, unary_op<kIntTypes, NoAttrs>("BitwiseNot", [](const NoAttrs&) {
                   return [](auto x) { return decltype(x)(~x); };
                 }));
  add_builtin_op(r, logic_binary<kIntTypes>("BitwiseAnd", [](auto a, auto b) {
                   return decltype(a)(a & b);
                 }));
  add_builtin_op(r, logic_binary<kIntTypes>("BitwiseOr", [](auto a, auto b) {
                   return decltype(a)(a | b);
                 }));
  add_builtin_op(r, logic_binary<kIntTypes>("BitwiseXor", [](auto a, auto b) {
                   return decltype(a)(a ^ b);
                 }));
  add_builtin_op(r, make_op<BitShiftAttrs>("BitShift", FusionKind::broadcast, 2, 2,
                                           infer_bitshift, bitshift_kernel));
  add_builtin_op(r, float_test<NoAttrs>("IsNaN", [](const NoAttrs&) {
                   return [](auto x) { return std::isnan(x); };
                 }));
  add_builtin_op(r, float_test<IsInfAttrs>("IsInf", [](const IsInfAttrs& a) {
                   const bool neg = a.detect_negative != 0, pos = a.detect_positive != 0;
                   return [neg, pos](auto x) { return std::isinf(x) && (x > 0 ? pos : neg); };
                 }));
}

}  // namespace collage::ops
