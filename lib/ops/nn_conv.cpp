// Conv (1-D/2-D/3-D, groups, dilations, auto_pad): shape inference and im2col + GEMM kernel.
#include <algorithm>
#include <vector>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/gemm_ref.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

WindowAttrs window_attrs(const ConvAttrs& a) {
  return {a.auto_pad, a.strides, a.dilations, a.pads, /*ceil_mode=*/false};
}

absl::Status infer_conv(InferContext& ctx) {
  const auto& a = ctx.attrs<ConvAttrs>();
  if (absl::Status s = require_f32(ctx, {"X", "W", "B"}); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  if (x.size() < 3 || x.size() > 5)
    return ctx.error(str_cat("input X has shape ", list_to_string(x), ", expected rank 3 to 5 ",
                             "(N x C x 1-3 spatial axes)"));
  if (w.size() != x.size())
    return ctx.error(str_cat("weight W has shape ", list_to_string(w), ", expected rank ", x.size(),
                             " like X ", list_to_string(x)));
  if (a.group < 1) return ctx.error(str_cat("group ", a.group, " must be >= 1"));
  int64_t grouped = 0;  // W's input channels x group, which can overflow: group is an attribute
  if (__builtin_mul_overflow(w[1], a.group, &grouped) || x[1] != grouped)
    return ctx.error(str_cat("input channels ", x[1], " do not match weight channels ", w[1],
                             " x group ", a.group));
  if (w[0] % a.group != 0)
    return ctx.error(str_cat("output channels ", w[0], " are not divisible by group ", a.group));
  const Shape kernel = spatial_dims(w);
  if (!a.kernel_shape.empty() && a.kernel_shape != kernel)
    return ctx.error(str_cat("kernel_shape ", list_to_string(a.kernel_shape),
                             " does not match weight spatial shape ", list_to_string(kernel)));
  if (ctx.has_input(2) && ctx.input(2).shape != Shape{w[0]})
    return ctx.error(str_cat("bias B has shape ", list_to_string(ctx.input(2).shape),
                             ", expected [", w[0], "]"));
  auto win = resolve_window(spatial_dims(x), kernel, window_attrs(a));
  if (!win.ok()) return node_error(ctx, win.status());
  Shape out = {x[0], w[0]};
  out.insert(out.end(), win->out.begin(), win->out.end());
  ctx.set_output(0, {DType::f32, out});
  return absl::OkStatus();
}

// Copies n elements src[0], src[step], ... to dst.
void copy_strided(const float* src, int64_t step, int64_t n, float* dst) {
  if (step == 1) {
    std::copy(src, src + n, dst);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * step];
}

// Unfolds `channels` input planes into the GEMM operand col, of shape
// (channels * kernel_size) x out_size: col[(c, kd, kh, kw), (od, oh, ow)] is the input element
// under kernel tap (kd, kh, kw) of the window of output (od, oh, ow), or 0 in the padding.
void im2col(const float* x, int64_t channels, const Window3& g, float* col) {
  const int64_t plane = g.in_size(), out_size = g.out_size();
  float* row = col;
  for (int64_t c = 0; c < channels; ++c) {
    const float* xc = x + c * plane;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t off_d = kd * g.dilation[0] - g.pad[0];
      const auto [d_lo, d_hi] = valid_range(off_d, g.stride[0], g.in[0], g.out[0]);
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t off_h = kh * g.dilation[1] - g.pad[1];
        const auto [h_lo, h_hi] = valid_range(off_h, g.stride[1], g.in[1], g.out[1]);
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, row += out_size) {
          const int64_t off_w = kw * g.dilation[2] - g.pad[2];
          const auto [w_lo, w_hi] = valid_range(off_w, g.stride[2], g.in[2], g.out[2]);
          for (int64_t od = 0; od < g.out[0]; ++od) {
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              float* dst = row + (od * g.out[1] + oh) * g.out[2];
              if (od < d_lo || od >= d_hi || oh < h_lo || oh >= h_hi) {
                std::fill(dst, dst + g.out[2], 0.f);
                continue;
              }
              const int64_t id = off_d + od * g.stride[0], ih = off_h + oh * g.stride[1];
              const float* src = xc + (id * g.in[1] + ih) * g.in[2];
              std::fill(dst, dst + w_lo, 0.f);
              if (w_lo < w_hi)
                copy_strided(src + off_w + w_lo * g.stride[2], g.stride[2], w_hi - w_lo,
                             dst + w_lo);
              std::fill(dst + w_hi, dst + g.out[2], 0.f);
            }
          }
        }
      }
    }
  }
}

absl::Status conv_reference(const KernelArgs& args) {
  const auto& a = args.get<ConvAttrs>();
  const Tensor& x = args.inputs[0];
  const Tensor& w = args.inputs[1];
  const bool has_bias = args.inputs.size() > 2 && !args.inputs[2].empty();
  Tensor& y = args.outputs[0];
  auto win = resolve_window(spatial_dims(x.shape()), spatial_dims(w.shape()), window_attrs(a));
  if (!win.ok()) return win.status();
  const Window3 g = to_3d(*win);
  const int64_t batch = x.shape()[0], channels = x.shape()[1], filters = w.shape()[0];
  const int64_t cg = channels / a.group, mg = filters / a.group;
  const int64_t k = cg * g.kernel_size(), in_size = g.in_size(), out_size = g.out_size();
  // A 1x1 kernel with unit strides and no padding reads the input planes as they are.
  const bool direct = g.kernel_size() == 1 && g.stride == std::array<int64_t, 3>{1, 1, 1} &&
                      g.pad == std::array<int64_t, 3>{0, 0, 0} && g.out == g.in;
  std::vector<float> col(direct ? 0 : k * out_size);

  float* yd = y.data<float>();
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; has_bias && m < filters; ++m) {
      float* plane = yd + (n * filters + m) * out_size;
      std::fill(plane, plane + out_size, args.inputs[2].data<float>()[m]);
    }
    for (int64_t gi = 0; gi < a.group; ++gi) {
      const float* xg = x.data<float>() + (n * channels + gi * cg) * in_size;
      if (!direct) im2col(xg, cg, g, col.data());
      const MatrixRef wg{w.data<float>() + gi * mg * k, k, false};
      const MatrixRef bg{direct ? xg : col.data(), out_size, false};
      gemm_f32(mg, out_size, k, 1.f, wg, bg, has_bias ? 1.f : 0.f,
               yd + (n * filters + gi * mg) * out_size, out_size);
    }
  }
  return absl::OkStatus();
}

}  // namespace

void register_conv_op(OpRegistry& r) {
  add_builtin(r, make_op<ConvAttrs>("Conv", FusionKind::out_elementwise_fusable, 2, 3, infer_conv,
                                    conv_reference));
}

}  // namespace collage::ops
