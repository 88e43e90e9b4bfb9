// DynamicQuantizeRange and DynamicQuantizeParams: the internal operators a large
// DynamicQuantizeLinear is split into (include/collage/ops/dynamic_quantize_parts.h), so that its
// range and its quantization each run on every thread.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "collage/ops/dynamic_quantize_parts.h"
#include "ops/dynamic_quantize_parts.h"
#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

// The shape of x split as the range reads it: leading (axes before axis - 1), the chunked axis,
// and the trailing axes (from axis on), each flattened.
struct RangeSplit {
  int64_t leading = 1, chunked = 1, trailing = 1;
};

RangeSplit range_split(const Shape& x, int64_t axis) {
  RangeSplit s;
  for (int64_t k = 0; k < static_cast<int64_t>(x.size()); ++k) {
    if (k < axis - 1) s.leading *= x[k];
    else if (k == axis - 1) s.chunked = x[k];
    else s.trailing *= x[k];
  }
  return s;
}

absl::Status infer_range(InferContext& ctx) {
  const auto& a = ctx.attrs<DynamicQuantizeRangeAttrs>();
  const TensorType& x = ctx.input(0);
  if (x.dtype != DType::f32) return ctx.error("x must be f32");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (a.axis < 1 || a.axis > rank)
    return ctx.error("axis must be between 1 and x's rank " + std::to_string(rank));
  const int64_t extent = x.shape[static_cast<size_t>(a.axis - 1)];
  if (a.chunks < 1 || extent % a.chunks != 0)
    return ctx.error("chunks " + std::to_string(a.chunks) + " does not divide axis " +
                     std::to_string(a.axis - 1) + " of extent " + std::to_string(extent));
  ctx.set_output(0, {DType::f32, {2, a.chunks, range_split(x.shape, a.axis).trailing}});
  return absl::OkStatus();
}

// As DynamicQuantizeLinear's reference: std::max keeps the running value against a NaN.
absl::Status range_kernel(const KernelArgs& args) {
  const auto& a = args.get<DynamicQuantizeRangeAttrs>();
  const Tensor& x = args.inputs[0];
  const RangeSplit s = range_split(x.shape(), a.axis);
  const int64_t per_chunk = s.chunked / a.chunks;
  const float* p = x.data<float>();
  float* neg = args.outputs[0].data<float>();
  float* pos = neg + a.chunks * s.trailing;
  std::fill(neg, neg + 2 * a.chunks * s.trailing, -std::numeric_limits<float>::infinity());
  for (int64_t l = 0; l < s.leading; ++l)
    for (int64_t k = 0; k < s.chunked; ++k) {
      const float* row = p + (l * s.chunked + k) * s.trailing;
      const int64_t at = k / per_chunk * s.trailing;
      for (int64_t t = 0; t < s.trailing; ++t) {
        neg[at + t] = std::max(neg[at + t], -row[t]);
        pos[at + t] = std::max(pos[at + t], row[t]);
      }
    }
  return absl::OkStatus();
}

absl::Status infer_params(InferContext& ctx) {
  const TensorType& r = ctx.input(0);
  if (r.dtype != DType::f32 || r.shape.size() != 3 || r.shape[0] != 2)
    return ctx.error("the range must be f32 [2, chunks, n], got " + type_to_string(r));
  ctx.set_output(0, {DType::f32, {}});
  ctx.set_output(1, {DType::u8, {}});
  return absl::OkStatus();
}

// DynamicQuantizeLinear's scale and zero point (lib/ops/quantize.cpp) from the range.
absl::Status params_kernel(const KernelArgs& args) {
  const Tensor& r = args.inputs[0];
  const int64_t half = r.numel() / 2;
  const float* neg = r.data<float>();
  float mx = 0.f, mn = 0.f;
  for (int64_t i = 0; i < half; ++i) mn = std::min(mn, -neg[i]), mx = std::max(mx, neg[half + i]);
  const float scale = (mx == mn ? 1.f : mx - mn) / 255.f;
  const float zp = std::nearbyint(std::clamp(0.f - mn / scale, 0.f, 255.f));
  args.outputs[0].data<float>()[0] = scale;
  args.outputs[1].data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  return absl::OkStatus();
}

}  // namespace

void register_dynamic_quantize_parts(OpRegistry& r) {
  add_builtin_op(r, make_op<DynamicQuantizeRangeAttrs>("DynamicQuantizeRange", FusionKind::opaque,
                                                       1, 1, infer_range, range_kernel));
  add_builtin_op(r, make_op<NoAttrs>("DynamicQuantizeParams", FusionKind::opaque, 1, 1,
                                     infer_params, params_kernel));
}

}  // namespace collage::ops
