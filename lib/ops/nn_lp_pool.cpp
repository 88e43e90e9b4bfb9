// LpPool: the p-norm of each window (f32; f16, bf16 and f64 through the nn family's widening).
#include <cmath>

#include "collage/ops/pooling.h"
#include "core/str_cat.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

WindowAttrs window_attrs(const LpPoolAttrs& a) {
  return {a.auto_pad, a.strides, a.dilations, a.pads, a.ceil_mode != 0};
}

absl::Status infer_lp_pool(InferContext& ctx) {
  const auto& a = ctx.attrs<LpPoolAttrs>();
  if (absl::Status s = require_f32(ctx, {"X"}); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3 || x.size() > 5 || a.kernel_shape.size() + 2 != x.size())
    return ctx.error(str_cat("input X ", list_to_string(x), " and kernel_shape ",
                             list_to_string(a.kernel_shape), " do not fit (N x C x 1-3 axes)"));
  if (a.p < 1) return ctx.error(str_cat("p is ", a.p, ", expected >= 1"));
  auto win = resolve_window(spatial_dims(x), a.kernel_shape, window_attrs(a));
  if (!win.ok()) return node_error(ctx, win.status());
  Shape out = {x[0], x[1]};
  out.insert(out.end(), win->out.begin(), win->out.end());
  ctx.set_output(0, {DType::f32, out});
  return absl::OkStatus();
}

absl::Status lp_pool_reference(const KernelArgs& args) {
  const auto& a = args.get<LpPoolAttrs>();
  const Tensor& x = args.inputs[0];
  auto win = resolve_window(spatial_dims(x.shape()), a.kernel_shape, window_attrs(a));
  if (!win.ok()) return win.status();
  const Window3 g = to_3d(*win);
  const double p = static_cast<double>(a.p);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  float* out = args.outputs[0].data<float>();
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float* in = x.data<float>() + pl * g.in_size();
    for (int64_t od = 0; od < g.out[0]; ++od) {
      const int64_t sd = od * g.stride[0] - g.pad[0];
      const auto [kd_lo, kd_hi] = valid_range(sd, g.dilation[0], g.in[0], g.kernel[0]);
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const int64_t sh = oh * g.stride[1] - g.pad[1];
        const auto [kh_lo, kh_hi] = valid_range(sh, g.dilation[1], g.in[1], g.kernel[1]);
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          const int64_t sw = ow * g.stride[2] - g.pad[2];
          const auto [kw_lo, kw_hi] = valid_range(sw, g.dilation[2], g.in[2], g.kernel[2]);
          double sum = 0;
          for (int64_t kd = kd_lo; kd < kd_hi; ++kd)
            for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
              const float* row =
                  in + ((sd + kd * g.dilation[0]) * g.in[1] + sh + kh * g.dilation[1]) * g.in[2];
              for (int64_t kw = kw_lo; kw < kw_hi; ++kw)
                sum += std::pow(std::fabs(static_cast<double>(row[sw + kw * g.dilation[2]])), p);
            }
          *out++ = static_cast<float>(std::pow(sum, 1.0 / p));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

void register_lp_pool_op(OpRegistry& r) {
  add_builtin(r, make_op<LpPoolAttrs>("LpPool", FusionKind::opaque, 1, 1, infer_lp_pool,
                                      lp_pool_reference));
}

}  // namespace collage::ops
