// Resize: nearest, n-linear and cubic resampling with the ONNX coordinate transformation modes,
// on the planning and resampling shared with the runtime's dynamic module
// (runtime/algorithms/dyn_resize.h), which follow ONNX Runtime's CPU kernel.
#include <cstring>

#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "dyn_resize.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

using rt_dynamic::ResizePlan;
using rt_dynamic::ResizeSpec;

absl::StatusOr<ResizeSpec> spec_of(const ResizeAttrs& a, DType dtype) {
  ResizeSpec s;
  if (!rt_dynamic::parse_resize_mode(a.mode, &s.interp))
    return absl::InvalidArgumentError(
        str_cat("unknown mode '", a.mode, "' (expected nearest, linear or cubic)"));
  if (!rt_dynamic::parse_resize_coord(a.coordinate_transformation_mode, &s.coord))
    return absl::InvalidArgumentError(str_cat("unknown coordinate_transformation_mode '",
                                              a.coordinate_transformation_mode, "'"));
  if (!rt_dynamic::parse_resize_rounding(a.nearest_mode, &s.rounding))
    return absl::InvalidArgumentError(str_cat("unknown nearest_mode '", a.nearest_mode, "'"));
  if (!rt_dynamic::parse_resize_keep_aspect(a.keep_aspect_ratio_policy, &s.keep))
    return absl::InvalidArgumentError(str_cat("unknown keep_aspect_ratio_policy '",
                                              a.keep_aspect_ratio_policy,
                                              "' (expected stretch, not_larger or not_smaller)"));
  if (a.antialias != 0 && a.antialias != 1)
    return absl::InvalidArgumentError(str_cat("antialias ", a.antialias, " must be 0 or 1"));
  if (s.interp != rt_dynamic::ResizeInterp::nearest && dtype == DType::boolean)
    return absl::InvalidArgumentError(str_cat("mode '", a.mode, "' cannot interpolate bool"));
  s.cubic_coeff_a = a.cubic_coeff_a;
  s.exclude_outside = a.exclude_outside != 0;
  s.extrapolation_value = a.extrapolation_value;
  s.antialias = a.antialias != 0;
  s.roi = a.roi;
  s.scales = a.scales;
  s.sizes = a.sizes;
  s.axes = a.axes;
  return s;
}

absl::StatusOr<ResizePlan> plan(const ResizeSpec& s, const Shape& in) {
  ResizePlan p;
  if (std::string e = rt_dynamic::plan_resize(s, in, &p); !e.empty())
    return absl::InvalidArgumentError(e);
  return p;
}

absl::Status infer_resize(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  auto s = spec_of(ctx.attrs<ResizeAttrs>(), in.dtype);
  if (!s.ok()) return ctx.error(std::string(s.status().message()));
  auto p = plan(*s, in.shape);
  if (!p.ok()) return ctx.error(std::string(p.status().message()));
  ctx.set_output(0, {in.dtype, p->out});
  return absl::OkStatus();
}

absl::Status run_resize(const KernelArgs& k) {
  const auto& a = k.get<ResizeAttrs>();
  const Tensor& in = k.inputs[0];
  Tensor& out = k.outputs[0];
  auto s = spec_of(a, in.dtype());
  if (!s.ok()) return s.status();
  auto p = plan(*s, in.shape());
  if (!p.ok()) return p.status();
  if (out.numel() == 0) return absl::OkStatus();
  if (p->out == in.shape()) {
    std::memcpy(out.raw(), in.raw(), in.bytes());
    return absl::OkStatus();
  }
  const DType t = out.dtype();
  const size_t esize = dtype_size(t);
  if (s->interp == rt_dynamic::ResizeInterp::nearest) {
    unsigned char fill[8];
    store_float_as(a.extrapolation_value, in.dtype(), fill);
    gather_by_axis(esize, out.raw(), in.raw(), rt_dynamic::resize_nearest_tables(*p, *s, in.shape()),
                   fill);
    return absl::OkStatus();
  }
  std::vector<float> data(static_cast<size_t>(in.numel()));
  for (int64_t i = 0; i < in.numel(); ++i) data[i] = static_cast<float>(in.get_as_double(i));
  const std::vector<float> y = rt_dynamic::resize_interpolate(*p, *s, in.shape(), std::move(data));
  auto* o = static_cast<unsigned char*>(out.raw());
  for (size_t i = 0; i < y.size(); ++i) store_float_as(y[i], t, o + i * esize);
  return absl::OkStatus();
}

}  // namespace

void register_resize_op(OpRegistry& r) {
  add_tensor_op(
      r, make_op<ResizeAttrs>("Resize", FusionKind::injective, 1, 1, infer_resize, run_resize));
}

}  // namespace collage::ops
