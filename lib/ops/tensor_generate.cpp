// Shape, ConstantOfShape and Range: operators whose output is made from shapes or constants
// (constant folding always evaluates them at compile time).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

// The clamped [start, end) range of axes Shape reports.
std::pair<int64_t, int64_t> shape_range(const ShapeAttrs& a, int64_t rank) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const int64_t start = clamp(a.start), end = clamp(a.end);
  return {start, std::max(start, end)};
}

absl::Status infer_shape(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  auto [start, end] = shape_range(ctx.attrs<ShapeAttrs>(), static_cast<int64_t>(in.shape.size()));
  ctx.set_output(0, {DType::i64, {end - start}});
  return absl::OkStatus();
}

absl::Status run_shape(const KernelArgs& k) {
  const Shape& s = k.inputs[0].shape();
  auto [start, end] = shape_range(k.get<ShapeAttrs>(), static_cast<int64_t>(s.size()));
  std::copy(s.begin() + start, s.begin() + end, k.outputs[0].data<int64_t>());
  return absl::OkStatus();
}

absl::Status infer_constant_of_shape(InferContext& ctx) {
  const auto& a = ctx.attrs<ConstantOfShapeAttrs>();
  for (int64_t d : a.shape)
    if (d < 0)
      return ctx.error(str_cat("shape ", list_to_string(a.shape), " has a negative entry"));
  if (!a.value.empty() && a.value.numel() != 1)
    return ctx.error(str_cat("value must have one element, got ", type_to_string(a.value.type())));
  ctx.set_output(0, {a.value.empty() ? DType::f32 : a.value.dtype(), a.shape});
  return absl::OkStatus();
}

absl::Status run_constant_of_shape(const KernelArgs& k) {
  const auto& a = k.get<ConstantOfShapeAttrs>();
  Tensor& out = k.outputs[0];
  if (a.value.empty()) return absl::OkStatus();  // outputs start zeroed
  fill_elements(out.raw(), out.numel(), dtype_size(out.dtype()), a.value.raw());
  return absl::OkStatus();
}

// Range works in the element type as ONNX Runtime does: the length is
// ceil((limit - start) / delta) with the difference taken in the type, and elements accumulate
// by repeated addition. 16-bit floats compute in f32 and round after every step.
absl::StatusOr<int64_t> range_length(DType t, const Tensor& start, const Tensor& limit,
                                     const Tensor& delta) {
  double diff, step;
  if (is_integer(t)) {
    const int64_t s = start.get_as_int64(0), l = limit.get_as_int64(0);
    step = static_cast<double>(delta.get_as_int64(0));
    diff = static_cast<double>(l) - static_cast<double>(s);
  } else {
    const auto s = static_cast<float>(start.get_as_double(0));
    const auto l = static_cast<float>(limit.get_as_double(0));
    step = static_cast<float>(delta.get_as_double(0));
    diff = static_cast<double>(l - s);
  }
  if (step == 0) return absl::InvalidArgumentError("delta is 0");
  const double n = std::ceil(diff / step);
  if (!(n < 9.0e18)) return absl::InvalidArgumentError("the range has too many elements");
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

absl::Status infer_range(InferContext& ctx) {
  static const char* const kNames[] = {"start", "limit", "delta"};
  const DType t = ctx.input(0).dtype;
  for (int i = 0; i < 3; ++i) {
    const TensorType& in = ctx.input(i);
    if (in.dtype != t)
      return ctx.error(str_cat(kNames[i], " has dtype ", dtype_name(in.dtype), ", but start has ",
                               dtype_name(t)));
    if (in.numel() != 1 || in.shape.size() > 1)
      return ctx.error(str_cat(kNames[i], " must be a scalar, got ", type_to_string(in)));
  }
  if (t == DType::boolean) return ctx.error("Range does not take bool");
  // Bounds computed at run time: the length is known once they are (the reference executor
  // infers again on the actual values).
  if (!ctx.constant(0) || !ctx.constant(1) || !ctx.constant(2)) {
    ctx.set_output(0, {t, {kDynamicDim}});
    return absl::OkStatus();
  }
  auto n = range_length(t, *ctx.constant(0), *ctx.constant(1), *ctx.constant(2));
  if (!n.ok()) return ctx.error(std::string(n.status().message()));
  ctx.set_output(0, {t, {*n}});
  return absl::OkStatus();
}

absl::Status run_range(const KernelArgs& k) {
  const Tensor &start = k.inputs[0], &delta = k.inputs[2];
  Tensor& out = k.outputs[0];
  const DType t = out.dtype();
  const int64_t n = out.numel();
  if (is_integer(t)) {
    // Every element lies between start and limit, so no addition overflows the type.
    const int64_t step = delta.get_as_int64(0);
    return dispatch_dtype(t, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      T* o = out.data<T>();
      int64_t acc = start.get_as_int64(0);
      for (int64_t i = 0; i < n; ++i) {
        o[i] = static_cast<T>(acc);
        if (i + 1 < n) acc += step;
      }
    });
  }
  auto value = static_cast<float>(start.get_as_double(0));
  const auto step = static_cast<float>(delta.get_as_double(0));
  const size_t esize = dtype_size(t);
  auto* o = static_cast<unsigned char*>(out.raw());
  for (int64_t i = 0; i < n; ++i) {
    store_float_as(value, t, o + i * esize);
    value += step;
    if (t == DType::f16) value = half_to_float(float_to_half(value));
    if (t == DType::bf16) value = bfloat16_to_float(float_to_bfloat16(value));
  }
  return absl::OkStatus();
}

}  // namespace

void register_generator_ops(OpRegistry& r) {
  OpDef shape = make_op<ShapeAttrs>("Shape", FusionKind::opaque, 1, 1, infer_shape, run_shape);
  shape.shape_only = true;
  add_tensor_op(r, std::move(shape));
  add_tensor_op(r, make_op<ConstantOfShapeAttrs>("ConstantOfShape", FusionKind::opaque, 0, 0,
                                                 infer_constant_of_shape, run_constant_of_shape));
  add_tensor_op(r, make_op<NoAttrs>("Range", FusionKind::opaque, 3, 3, infer_range, run_range));
}

}  // namespace collage::ops
