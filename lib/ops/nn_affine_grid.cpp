// AffineGrid (ONNX 20): the sampling grid of an affine transform, computed in double. The size
// is an input; the output shape is exact when it is a compile-time constant and dynamic otherwise
// (the reference executor infers it again from the actual value).
#include <cassert>

#include "collage/ops/geometry.h"
#include "dyn_geometry.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

absl::Status infer_affine_grid(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 1, type_bit(DType::i64)); !s.ok()) return s;
  const int64_t a = ctx.attrs<AffineGridAttrs>().align_corners;
  if (a != 0 && a != 1) return ctx.error(str_cat("align_corners ", a, " must be 0 or 1"));
  const Shape& theta = ctx.input(0).shape;
  const Shape& size = ctx.input(1).shape;
  if (size.size() != 1 || (size[0] != 4 && size[0] != 5))
    return ctx.error(str_cat("size has shape ", shape_to_string(size),
                             "; it must list N, C, H, W or N, C, D, H, W"));
  const int64_t r = size[0] - 2;  // spatial axes
  if (theta.size() != 3 || theta[1] != r || theta[2] != r + 1)
    return ctx.error(str_cat("theta has shape ", shape_to_string(theta), "; for ", r,
                             " spatial axes it must be [N, ", r, ", ", r + 1, "]"));
  Shape out(static_cast<size_t>(r + 2), kDynamicDim);
  out[0] = theta[0];
  out.back() = r;
  if (const Tensor* c = ctx.constant(1)) {
    if (c->get_as_int64(0) != theta[0] && theta[0] != kDynamicDim)
      return ctx.error(str_cat("size gives N = ", c->get_as_int64(0), ", theta has ", theta[0]));
    for (int64_t i = 0; i < r; ++i) {
      out[i + 1] = c->get_as_int64(i + 2);
      if (out[i + 1] < 0) return ctx.error(str_cat("size has a negative extent ", out[i + 1]));
    }
    if (!checked_shape_numel(out))
      return ctx.error(str_cat("output shape ", shape_to_string(out), " is too large"));
  }
  ctx.set_output(0, {ctx.input(0).dtype, out});
  return absl::OkStatus();
}

absl::Status run_affine_grid(const KernelArgs& k) {
  const Tensor& theta = k.inputs[0];
  Tensor& y = k.outputs[0];
  const Shape spatial(y.shape().begin() + 1, y.shape().end() - 1);
  std::vector<double> out;
  rt_dynamic::affine_grid([&](int64_t i) { return theta.get_as_double(i); }, y.shape()[0],
                          spatial, k.get<AffineGridAttrs>().align_corners != 0, out);
  return dispatch_codec<kFloatTypes>(y.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* py = y.data<typename C::Storage>();
    for (size_t i = 0; i < out.size(); ++i)
      py[i] = C::store(static_cast<typename C::Compute>(out[i]));
  });
}

}  // namespace

void register_affine_grid_op(OpRegistry& r) {
  OpDef d = make_op<AffineGridAttrs>("AffineGrid", FusionKind::opaque, 2, 2, infer_affine_grid,
                                     run_affine_grid);
  d.dynamic_shapes = true;
  [[maybe_unused]] absl::Status s = r.add(std::move(d));
  assert(s.ok());
}

}  // namespace collage::ops
