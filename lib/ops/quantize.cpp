// Linear quantisation: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul and
// MatMulInteger (8- and 16-bit integers; float math as ONNX defines it, halves rounded to even).
#include <cmath>
#include <limits>

#include "collage/ops/quantize.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

constexpr TypeSet kQuantTypes = type_bit(DType::u8) | type_bit(DType::i8) |
                                type_bit(DType::u16) | type_bit(DType::i16);

// x rounded to float type t (the precision ONNX's definition computes in).
double round_to(DType t, double x) {
  double out = x;
  [[maybe_unused]] absl::Status s = dispatch_codec<kFloatTypes>(t, [&](auto codec) {
    using C = decltype(codec);
    out = static_cast<double>(C::load(C::store(static_cast<typename C::Compute>(x))));
  });
  return out;
}

std::pair<double, double> quant_range(DType t) {
  switch (t) {
    case DType::u8: return {0, 255};
    case DType::i8: return {-128, 127};
    case DType::u16: return {0, 65535};
    case DType::i16: return {-32768, 32767};
    default: return {0, 0};
  }
}

// Which scale entry element i of x uses (per tensor, per axis index or per block).
struct ScaleIndex {
  int64_t inner = 1, axis_len = 1, block = 0, groups = 1;
  bool per_tensor = true;
  int64_t operator()(int64_t i) const {
    if (per_tensor) return 0;
    const int64_t outer = i / (axis_len * inner), a = (i / inner) % axis_len, in = i % inner;
    if (block == 0) return a;
    return (outer * groups + a / block) * inner + in;
  }
};

absl::StatusOr<ScaleIndex> scale_index(const Shape& x, const Shape& scale, const QuantizeAttrs& a) {
  ScaleIndex s;
  if (shape_numel(scale) == 1 && a.block_size == 0) return s;
  const auto rank = static_cast<int64_t>(x.size());
  auto axis = normalize_axis(a.axis, rank);
  if (!axis) return absl::InvalidArgumentError(str_cat("axis ", a.axis, " is out of range"));
  s.per_tensor = false;
  s.axis_len = x[*axis];
  for (int64_t d = *axis + 1; d < rank; ++d) s.inner *= x[d];
  if (a.block_size <= 0) {
    if (scale != Shape{x[*axis]})
      return absl::InvalidArgumentError(str_cat("scale has shape ", shape_to_string(scale),
                                                ", expected one value or [", x[*axis], "]"));
    return s;
  }
  s.block = a.block_size;
  s.groups = (x[*axis] + a.block_size - 1) / a.block_size;
  Shape want = x;
  want[*axis] = s.groups;
  if (scale != want)
    return absl::InvalidArgumentError(str_cat("blocked scale has shape ", shape_to_string(scale),
                                              ", expected ", shape_to_string(want)));
  return s;
}

absl::Status infer_quantize(InferContext& ctx, bool quantize) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  const auto& a = ctx.attrs<QuantizeAttrs>();
  if (absl::Status s = check_dtype(ctx, 1, kFloatTypes); !s.ok()) return s;
  auto idx = scale_index(ctx.input(0).shape, ctx.input(1).shape, a);
  if (!idx.ok()) return ctx.error(str_cat(idx.status().message()));
  // One value each may differ in rank ([1] and []: ONNX Runtime's quantizer writes such pairs).
  if (ctx.has_input(2) && ctx.input(2).shape != ctx.input(1).shape &&
      !(shape_numel(ctx.input(2).shape) == 1 && shape_numel(ctx.input(1).shape) == 1))
    return ctx.error("zero_point must have the shape of scale");
  std::optional<DType> named;
  if (!a.output_dtype.empty()) {
    named = parse_dtype(a.output_dtype);
    if (!named) return ctx.error(str_cat("unknown output_dtype '", a.output_dtype, "'"));
  }
  DType out;
  if (quantize) {
    if (absl::Status s = check_dtype(ctx, 0, kFloatTypes | type_bit(DType::i32)); !s.ok()) return s;
    out = ctx.has_input(2) ? ctx.input(2).dtype : named.value_or(DType::u8);
    if (!in_set(kQuantTypes, out))
      return ctx.error(str_cat("quantizing to ", dtype_name(out), " is not supported (u8, i8, "
                               "u16, i16)"));
  } else {
    if (absl::Status s = check_dtype(ctx, 0, kQuantTypes | type_bit(DType::i32)); !s.ok()) return s;
    if (ctx.has_input(2))
      if (absl::Status s = check_same_dtype(ctx, 0, 2); !s.ok()) return s;
    out = named.value_or(ctx.input(1).dtype);
    if (!is_float(out)) return ctx.error("output_dtype must be a float type");
  }
  ctx.set_output(0, {out, ctx.input(0).shape});
  return absl::OkStatus();
}

// Writes doubles into an integer or float tensor.
absl::Status store_doubles(Tensor& out, const std::vector<double>& v) {
  return dispatch_codec<kNumericTypes>(out.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* p = out.data<typename C::Storage>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = C::store(static_cast<typename C::Compute>(v[i]));
  });
}

absl::Status quantize_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& scale = args.inputs[1];
  const bool zp = args.inputs.size() > 2 && !args.inputs[2].empty();
  auto idx = scale_index(x.shape(), scale.shape(), args.get<QuantizeAttrs>());
  if (!idx.ok()) return idx.status();
  const auto [lo, hi] = quant_range(args.outputs[0].dtype());
  const DType t = is_float(x.dtype()) ? x.dtype() : DType::f32;
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t s = (*idx)(i);
    double v = std::nearbyint(round_to(t, x.get_as_double(i) / scale.get_as_double(s)));
    if (zp) v += static_cast<double>(args.inputs[2].get_as_int64(s));
    y[i] = std::clamp(v, lo, hi);
  }
  return store_doubles(args.outputs[0], y);
}

absl::Status dequantize_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& scale = args.inputs[1];
  const bool zp = args.inputs.size() > 2 && !args.inputs[2].empty();
  auto idx = scale_index(x.shape(), scale.shape(), args.get<QuantizeAttrs>());
  if (!idx.ok()) return idx.status();
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t s = (*idx)(i);
    const int64_t q = x.get_as_int64(i) - (zp ? args.inputs[2].get_as_int64(s) : 0);
    y[i] = static_cast<double>(q) * scale.get_as_double(s);
  }
  return store_doubles(args.outputs[0], y);
}

absl::Status infer_dynamic_quantize(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 3); !s.ok()) return s;
  if (ctx.input(0).dtype != DType::f32) return ctx.error("x must be f32");
  ctx.set_output(0, {DType::u8, ctx.input(0).shape});
  if (ctx.requested_outputs() != 1) {
    ctx.set_output(1, {DType::f32, {}});
    ctx.set_output(2, {DType::u8, {}});
  }
  return absl::OkStatus();
}

absl::Status dynamic_quantize_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const float* p = x.data<float>();
  float mx = 0.f, mn = 0.f;
  for (int64_t i = 0; i < x.numel(); ++i) mx = std::max(mx, p[i]), mn = std::min(mn, p[i]);
  const float scale = (mx == mn ? 1.f : mx - mn) / 255.f;
  const float zp = std::nearbyint(std::clamp(0.f - mn / scale, 0.f, 255.f));
  uint8_t* y = args.outputs[0].data<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i)
    y[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(p[i] / scale) + zp, 0.f, 255.f));
  if (args.outputs.size() > 1) {
    args.outputs[1].data<float>()[0] = scale;
    args.outputs[2].data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  }
  return absl::OkStatus();
}

// C = (A - a_zp) @ (B - b_zp) in int64 over the last two axes, A and B broadcast as MatMul
// broadcasts (2-D or batched with equal batches); zero points one value or (b) one per column.
absl::StatusOr<std::vector<int64_t>> int_matmul(const Tensor& a, const Tensor* azp,
                                                const Tensor& b, const Tensor* bzp,
                                                const Shape& out) {
  const int64_t m = a.shape()[a.rank() - 2], k = a.shape().back(), n = b.shape().back();
  const int64_t batches = shape_numel(out) / (m * n);
  const int64_t a_batch = a.numel() / (m * k), b_batch = b.numel() / (k * n);
  std::vector<int64_t> c(static_cast<size_t>(shape_numel(out)), 0);
  for (int64_t bt = 0; bt < batches; ++bt) {
    const int64_t ao = (a_batch == 1 ? 0 : bt) * m * k, bo = (b_batch == 1 ? 0 : bt) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t s = 0;
        const int64_t bz = bzp ? bzp->get_as_int64(bzp->numel() == 1 ? 0 : j) : 0;
        const int64_t az = azp ? azp->get_as_int64(azp->numel() == 1 ? 0 : i) : 0;
        for (int64_t l = 0; l < k; ++l)
          s += (a.get_as_int64(ao + i * k + l) - az) * (b.get_as_int64(bo + l * n + j) - bz);
        c[(bt * m + i) * n + j] = s;
      }
  }
  return c;
}

absl::StatusOr<Shape> int_matmul_shape(const InferContext& ctx, int ia, int ib) {
  const Shape& a = ctx.input(ia).shape;
  const Shape& b = ctx.input(ib).shape;
  if (a.size() < 2 || b.size() < 2 || a.back() != b[b.size() - 2])
    return ctx.error(str_cat("cannot multiply ", shape_to_string(a), " by ", shape_to_string(b)));
  const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const int64_t na = shape_numel(ab), nb = shape_numel(bb);
  if (na != 1 && nb != 1 && ab != bb)
    return ctx.error("the batch axes of the two inputs must match (or one have none)");
  Shape out = na >= nb && !ab.empty() ? ab : bb;
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  return out;
}

absl::Status infer_matmul_integer(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  for (int i : {0, 1})
    if (absl::Status s = check_dtype(ctx, i, type_bit(DType::u8) | type_bit(DType::i8)); !s.ok())
      return s;
  auto out = int_matmul_shape(ctx, 0, 1);
  if (!out.ok()) return out.status();
  ctx.set_output(0, {DType::i32, *out});
  return absl::OkStatus();
}

absl::Status matmul_integer_kernel(const KernelArgs& args) {
  auto opt = [&](size_t i) { return args.inputs.size() > i && !args.inputs[i].empty() ? &args.inputs[i] : nullptr; };
  auto c = int_matmul(args.inputs[0], opt(2), args.inputs[1], opt(3), args.outputs[0].shape());
  if (!c.ok()) return c.status();
  int32_t* y = args.outputs[0].data<int32_t>();
  for (size_t i = 0; i < c->size(); ++i) y[i] = static_cast<int32_t>((*c)[i]);
  return absl::OkStatus();
}

absl::Status infer_qlinear_matmul(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  for (int i : {0, 3})
    if (absl::Status s = check_dtype(ctx, i, type_bit(DType::u8) | type_bit(DType::i8)); !s.ok())
      return s;
  for (int i : {1, 4, 6})
    if (absl::Status s = check_dtype(ctx, i, kFloatTypes); !s.ok()) return s;
  auto out = int_matmul_shape(ctx, 0, 3);
  if (!out.ok()) return out.status();
  ctx.set_output(0, {ctx.input(7).dtype, *out});
  return absl::OkStatus();
}

absl::Status qlinear_matmul_kernel(const KernelArgs& args) {
  const auto& in = args.inputs;
  auto c = int_matmul(in[0], &in[2], in[3], &in[5], args.outputs[0].shape());
  if (!c.ok()) return c.status();
  // ONNX multiplies by a_scale * b_scale / y_scale computed in the scales' type.
  const DType st = in[1].dtype();
  const int64_t n = args.outputs[0].shape().back();
  const auto [lo, hi] = quant_range(args.outputs[0].dtype());
  std::vector<double> y(c->size());
  for (size_t i = 0; i < c->size(); ++i) {
    const int64_t j = static_cast<int64_t>(i) % n;
    const double bs = in[4].get_as_double(in[4].numel() == 1 ? 0 : j);
    const double mult = round_to(st, round_to(st, in[1].get_as_double(0) * bs) / in[6].get_as_double(0));
    const double v = static_cast<double>((*c)[i]) * mult + static_cast<double>(in[7].get_as_int64(0));
    y[i] = std::clamp(std::nearbyint(v), lo, hi);
  }
  return store_doubles(args.outputs[0], y);
}

}  // namespace

void register_quantize_ops(OpRegistry& r) {
  add_builtin_op(r, make_op<QuantizeAttrs>(
                        "QuantizeLinear", FusionKind::elementwise, 2, 3,
                        [](InferContext& ctx) { return infer_quantize(ctx, true); },
                        quantize_kernel));
  add_builtin_op(r, make_op<QuantizeAttrs>(
                        "DequantizeLinear", FusionKind::elementwise, 2, 3,
                        [](InferContext& ctx) { return infer_quantize(ctx, false); },
                        dequantize_kernel));
  add_builtin_op(r, make_op<NoAttrs>("DynamicQuantizeLinear", FusionKind::opaque, 1, 1,
                                     infer_dynamic_quantize, dynamic_quantize_kernel));
  add_builtin_op(r, make_op<NoAttrs>("MatMulInteger", FusionKind::opaque, 2, 4,
                                     infer_matmul_integer, matmul_integer_kernel));
  add_builtin_op(r, make_op<NoAttrs>("QLinearMatMul", FusionKind::opaque, 8, 8,
                                     infer_qlinear_matmul, qlinear_matmul_kernel));
}

}  // namespace collage::ops
