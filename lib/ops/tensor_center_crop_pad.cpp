// CenterCropPad (ONNX 18): crops or zero-pads about the centre. The target shape is an input;
// the output shape is exact when it is a compile-time constant and dynamic otherwise (the
// reference executor infers it again from the actual value).
#include <cassert>

#include "collage/ops/geometry.h"
#include "dyn_geometry.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

// The axes the target shape applies to, normalised, or an error naming the bad one.
absl::StatusOr<std::vector<int64_t>> crop_axes(const InferContext& ctx, int64_t rank) {
  const auto& given = ctx.attrs<CenterCropPadAttrs>().axes;
  std::vector<int64_t> axes;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : given) {
    auto n = normalize_axis(a, rank);
    if (!n) return ctx.error(str_cat("axis ", a, " is out of range for rank ", rank));
    if (seen[*n]) return ctx.error(str_cat("axis ", a, " is listed twice"));
    seen[*n] = true;
    axes.push_back(*n);
  }
  if (given.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  return axes;
}

absl::Status infer_center_crop_pad(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 1, kSignedIntTypes); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  auto axes = crop_axes(ctx, static_cast<int64_t>(x.size()));
  if (!axes.ok()) return axes.status();
  const TensorType& shape = ctx.input(1);
  if (shape.shape.size() != 1 || shape.shape[0] != static_cast<int64_t>(axes->size()))
    return ctx.error(str_cat("shape is ", type_to_string(shape), "; it must list ",
                             axes->size(), " sizes, one per axis"));
  Shape out = x;
  const Tensor* target = ctx.constant(1);
  for (size_t i = 0; i < axes->size(); ++i) {
    const int64_t v = target ? target->get_as_int64(static_cast<int64_t>(i)) : kDynamicDim;
    if (target && v < 0) return ctx.error(str_cat("shape ", v, " on axis ", (*axes)[i]));
    out[(*axes)[i]] = v;
  }
  if (!checked_shape_numel(out) && target)
    return ctx.error(str_cat("output shape ", shape_to_string(out), " is too large"));
  ctx.set_output(0, {ctx.input(0).dtype, out});
  return absl::OkStatus();
}

absl::Status run_center_crop_pad(const KernelArgs& k) {
  const Tensor& x = k.inputs[0];
  Tensor& y = k.outputs[0];
  rt_dynamic::center_crop_pad(static_cast<const uint8_t*>(x.raw()), x.shape(),
                              static_cast<uint8_t*>(y.raw()), y.shape(), dtype_size(y.dtype()));
  return absl::OkStatus();
}

}  // namespace

void register_center_crop_pad_op(OpRegistry& r) {
  OpDef d = make_op<CenterCropPadAttrs>("CenterCropPad", FusionKind::opaque, 2, 2,
                                        infer_center_crop_pad, run_center_crop_pad);
  d.dynamic_shapes = true;
  [[maybe_unused]] absl::Status s = r.add(std::move(d));
  assert(s.ok());
}

}  // namespace collage::ops
