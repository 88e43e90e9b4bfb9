// CenterCropPad (ONNX 18): crops or zero-pads about the centre. The target shape is an input;
// the output shape is exact when it is a compile-time constant and dynamic otherwise (the
// reference executor infers it again from the actual value).
#include <cassert>
#include <cstring>

#include "collage/ops/geometry.h"
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
  const auto rank = static_cast<int64_t>(x.shape().size());
  // Input index = output index + shift per axis (a crop shifts forward, a pad back).
  std::vector<int64_t> shift(static_cast<size_t>(rank), 0);
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t in = x.shape()[a], out = y.shape()[a];
    shift[a] = in >= out ? (in - out) / 2 : -((out - in) / 2);
  }
  const size_t esize = dtype_size(y.dtype());
  std::memset(y.raw(), 0, static_cast<size_t>(y.numel()) * esize);
  const auto in_strides = shape_strides(x.shape());
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t src = 0;
    bool inside = true;
    for (int64_t a = 0; a < rank && inside; ++a) {
      const int64_t i = idx[a] + shift[a];
      inside = i >= 0 && i < x.shape()[a];
      src += i * in_strides[a];
    }
    if (inside) copy_element(y.raw(), o, x.raw(), src, esize);
    for (int64_t a = rank - 1; a >= 0 && ++idx[a] == y.shape()[a]; --a) idx[a] = 0;
  }
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
