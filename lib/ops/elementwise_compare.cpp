// Comparisons producing bool (Equal on every dtype, Less, Greater, LessOrEqual and
// GreaterOrEqual on numeric dtypes) and
// Where(cond, X, Y), all with numpy broadcasting.
#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

template <TypeSet Allowed, typename F>
OpDef compare_op(std::string name, F f, bool commutative) {
  OpDef d = make_op<NoAttrs>(
      std::move(name), FusionKind::broadcast, 2, 2,
      [](InferContext& ctx) {
        const DType out = DType::boolean;
        return infer_binary(ctx, Allowed, &out);
      },
      [f](const KernelArgs& args) {
        return dispatch_codec<Allowed>(args.inputs[0].dtype(), [&](auto codec) {
          using C = decltype(codec);
          broadcast_binary<C, C, BoolCodec>(args.inputs[0], args.inputs[1], args.outputs[0], f);
        });
      });
  d.commutative = commutative;
  return d;
}

absl::Status infer_where(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (ctx.input(0).dtype != DType::boolean)
    return ctx.error(str_cat("condition (input 0) has dtype ", dtype_name(ctx.input(0).dtype),
                             ", expected bool"));
  if (absl::Status s = check_same_dtype(ctx, 1, 2); !s.ok()) return s;
  absl::StatusOr<Shape> shape = broadcast_inputs(ctx, {0, 1, 2});
  if (!shape.ok()) return shape.status();
  ctx.set_output(0, TensorType{ctx.input(1).dtype, std::move(*shape)});
  return absl::OkStatus();
}

// Where moves elements without looking at them, so it only needs their size: S is an unsigned
// integer of the element's width.
template <typename S>
void where_loop(const Tensor& cond, const Tensor& x, const Tensor& y, Tensor& out) {
  const auto plan = plan_broadcast<3>({&cond.shape(), &x.shape(), &y.shape()}, out.shape());
  const uint8_t* pc = cond.data<uint8_t>();
  const S* px = x.data<S>();
  const S* py = y.data<S>();
  S* po = out.data<S>();
  const int64_t sc = plan.inner_stride(0), sx = plan.inner_stride(1), sy = plan.inner_stride(2);
  for_each_row(plan, [&](const std::array<int64_t, 3>& off, int64_t o, int64_t n) {
    const uint8_t* c = pc + off[0];
    const S* a = px + off[1];
    const S* b = py + off[2];
    S* z = po + o;
    if (sc && sx && sy) {
      for (int64_t j = 0; j < n; ++j) z[j] = c[j] ? a[j] : b[j];
    } else {
      for (int64_t j = 0; j < n; ++j) z[j] = c[j * sc] ? a[j * sx] : b[j * sy];
    }
  });
}

absl::Status where_kernel(const KernelArgs& args) {
  const Tensor& cond = args.inputs[0];
  const Tensor& x = args.inputs[1];
  const Tensor& y = args.inputs[2];
  Tensor& out = args.outputs[0];
  switch (dtype_size(x.dtype())) {
    case 1:
      where_loop<uint8_t>(cond, x, y, out);
      break;
    case 2:
      where_loop<uint16_t>(cond, x, y, out);
      break;
    case 4:
      where_loop<uint32_t>(cond, x, y, out);
      break;
    case 8:
      where_loop<uint64_t>(cond, x, y, out);
      break;
    default:
      return absl::InternalError("Where: unexpected element size");
  }
  return absl::OkStatus();
}

}  // namespace

void register_comparison_ops(OpRegistry& r) {
  add_builtin_op(r, compare_op<kAllTypes>(
                        "Equal", [](auto a, auto b) { return a == b; }, true));
  add_builtin_op(r, compare_op<kNumericTypes>(
                        "Less", [](auto a, auto b) { return a < b; }, false));
  add_builtin_op(r, compare_op<kNumericTypes>(
                        "Greater", [](auto a, auto b) { return a > b; }, false));
  add_builtin_op(r, compare_op<kNumericTypes>(
                        "LessOrEqual", [](auto a, auto b) { return a <= b; }, false));
  add_builtin_op(r, compare_op<kNumericTypes>(
                        "GreaterOrEqual", [](auto a, auto b) { return a >= b; }, false));
  add_builtin_op(r,
                 make_op<NoAttrs>("Where", FusionKind::broadcast, 3, 3, infer_where, where_kernel));
}

}  // namespace collage::ops
