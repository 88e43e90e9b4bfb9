// ConvTranspose (1-D/2-D/3-D, groups, output_padding, output_shape, auto_pad): shape inference
// and a GEMM + col2im kernel.
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

// Geometry of the transposed window: `in` is X's spatial shape, `out` the output's, and output
// position i * stride + tap * dilation - pad_begin receives input i through kernel tap `tap`.
// Follows the ONNX rules (and ONNX Runtime where ONNX is silent): output_shape overrides pads;
// the total padding is split with the extra element at the end for SAME_UPPER and at the begin
// otherwise.
absl::StatusOr<Window> resolve_transpose_window(const Shape& in, const Shape& kernel,
                                                const ConvTransposeAttrs& a) {
  if (absl::Status s = check_auto_pad(a.auto_pad); !s.ok()) return s;
  const int64_t rank = static_cast<int64_t>(in.size());
  Window w;
  w.in = in;
  w.kernel = kernel;
  auto stride = per_axis_list("strides", a.strides, rank, 1, 1);
  if (!stride.ok()) return stride.status();
  auto dilation = per_axis_list("dilations", a.dilations, rank, 1, 1);
  if (!dilation.ok()) return dilation.status();
  auto out_pad = per_axis_list("output_padding", a.output_padding, rank, 0, 0);
  if (!out_pad.ok()) return out_pad.status();
  w.stride = *std::move(stride);
  w.dilation = *std::move(dilation);
  if (!a.output_shape.empty() && static_cast<int64_t>(a.output_shape.size()) != rank)
    return absl::InvalidArgumentError(str_cat("output_shape ", list_to_string(a.output_shape),
                                              " must have ", rank,
                                              " values (the spatial output sizes)"));
  const bool explicit_pads = a.auto_pad == "NOTSET" && a.output_shape.empty() && !a.pads.empty();
  if (explicit_pads && static_cast<int64_t>(a.pads.size()) != 2 * rank)
    return absl::InvalidArgumentError(str_cat("pads has ", a.pads.size(), " values, expected ",
                                              2 * rank, " (begin and end of each spatial axis)"));
  w.pad_begin.assign(rank, 0);
  w.pad_end.assign(rank, 0);
  w.out.assign(rank, 0);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t op = (*out_pad)[i];
    if (op >= std::max(w.stride[i], w.dilation[i]))
      return absl::InvalidArgumentError(str_cat(
          "output_padding ", op, " on spatial axis ", i,
          " must be less than max(stride, dilation) = ", std::max(w.stride[i], w.dilation[i])));
    // extent = (kernel - 1) * dilation + 1, full = stride * (in - 1) + output_padding + extent,
    // and SAME's in * stride, counted with overflow checks (attributes can be anything).
    int64_t extent = 0, full = 0, same = 0;
    if (__builtin_mul_overflow(kernel[i] - 1, w.dilation[i], &extent) ||
        __builtin_add_overflow(extent, 1, &extent) ||
        __builtin_mul_overflow(w.stride[i], in[i] - 1, &full) ||
        __builtin_add_overflow(full, op, &full) || __builtin_add_overflow(full, extent, &full) ||
        __builtin_mul_overflow(in[i], w.stride[i], &same))
      return absl::InvalidArgumentError(
          str_cat("spatial axis ", i, ": the output size of input ", in[i], ", kernel ",
                  kernel[i], ", stride ", w.stride[i], " and dilation ", w.dilation[i],
                  " does not fit in 64 bits"));
    if (explicit_pads) {
      w.pad_begin[i] = a.pads[i];
      w.pad_end[i] = a.pads[rank + i];
      if (w.pad_begin[i] < 0 || w.pad_end[i] < 0)
        return absl::InvalidArgumentError(
            str_cat("pads ", list_to_string(a.pads), " must be >= 0"));
      w.out[i] = full - w.pad_begin[i] - w.pad_end[i];
      if (w.out[i] < 1)
        return absl::InvalidArgumentError(str_cat("pads ", list_to_string(a.pads),
                                                  " leave no output on spatial axis ", i,
                                                  " (full output size ", full, ")"));
      continue;
    }
    if (a.auto_pad == "VALID" && a.output_shape.empty()) {
      w.out[i] = full;
      continue;
    }
    if (!a.output_shape.empty()) {
      w.out[i] = a.output_shape[i];
      if (w.out[i] < 1 || (w.out[i] > full && (w.out[i] - extent - op) / w.stride[i] + 1 != in[i]))
        return absl::InvalidArgumentError(str_cat(
            "output_shape ", list_to_string(a.output_shape), " cannot be produced on spatial axis ",
            i, " (full output size ", full, ", stride ", w.stride[i], ")"));
    } else if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      w.out[i] = same;
    } else {
      w.out[i] = full;
    }
    const int64_t total = std::max<int64_t>(0, full - w.out[i]);
    w.pad_begin[i] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    w.pad_end[i] = total - w.pad_begin[i];
  }
  return w;
}

absl::Status infer_conv_transpose(InferContext& ctx) {
  const auto& a = ctx.attrs<ConvTransposeAttrs>();
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
  if (x[1] != w[0])
    return ctx.error(str_cat("input channels ", x[1], " do not match weight input channels ", w[0],
                             " (W is C x M/group x kernel)"));
  if (x[1] % a.group != 0)
    return ctx.error(str_cat("input channels ", x[1], " are not divisible by group ", a.group));
  const Shape kernel = spatial_dims(w);
  for (int64_t k : kernel)
    if (k < 1) return ctx.error(str_cat("weight W has an empty kernel ", list_to_string(w)));
  if (!a.kernel_shape.empty() && a.kernel_shape != kernel)
    return ctx.error(str_cat("kernel_shape ", list_to_string(a.kernel_shape),
                             " does not match weight spatial shape ", list_to_string(kernel)));
  const int64_t filters = w[1] * a.group;
  if (ctx.has_input(2) && ctx.input(2).shape != Shape{filters})
    return ctx.error(str_cat("bias B has shape ", list_to_string(ctx.input(2).shape),
                             ", expected [", filters, "]"));
  auto win = resolve_transpose_window(spatial_dims(x), kernel, a);
  if (!win.ok()) return node_error(ctx, win.status());
  Shape out = {x[0], filters};
  out.insert(out.end(), win->out.begin(), win->out.end());
  ctx.set_output(0, {DType::f32, out});
  return absl::OkStatus();
}

// Scatters col, of shape (channels * kernel_size) x in_size, into `channels` output planes:
// the inverse of im2col, adding every tap's contribution to the output position it reaches.
void col2im(const float* col, int64_t channels, const Window3& g, float* y) {
  const int64_t in_size = g.in_size(), plane = g.out_size();
  const float* row = col;
  for (int64_t c = 0; c < channels; ++c) {
    float* yc = y + c * plane;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t off_d = kd * g.dilation[0] - g.pad[0];
      const auto [d_lo, d_hi] = valid_range(off_d, g.stride[0], g.out[0], g.in[0]);
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t off_h = kh * g.dilation[1] - g.pad[1];
        const auto [h_lo, h_hi] = valid_range(off_h, g.stride[1], g.out[1], g.in[1]);
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, row += in_size) {
          const int64_t off_w = kw * g.dilation[2] - g.pad[2];
          const auto [w_lo, w_hi] = valid_range(off_w, g.stride[2], g.out[2], g.in[2]);
          for (int64_t id = d_lo; id < d_hi; ++id) {
            for (int64_t ih = h_lo; ih < h_hi; ++ih) {
              const int64_t od = off_d + id * g.stride[0], oh = off_h + ih * g.stride[1];
              const float* src = row + (id * g.in[1] + ih) * g.in[2];
              float* dst = yc + (od * g.out[1] + oh) * g.out[2];
              for (int64_t iw = w_lo; iw < w_hi; ++iw) dst[off_w + iw * g.stride[2]] += src[iw];
            }
          }
        }
      }
    }
  }
}

absl::Status conv_transpose_reference(const KernelArgs& args) {
  const auto& a = args.get<ConvTransposeAttrs>();
  const Tensor& x = args.inputs[0];
  const Tensor& w = args.inputs[1];
  const bool has_bias = args.inputs.size() > 2 && !args.inputs[2].empty();
  Tensor& y = args.outputs[0];
  auto win = resolve_transpose_window(spatial_dims(x.shape()), spatial_dims(w.shape()), a);
  if (!win.ok()) return win.status();
  const Window3 g = to_3d(*win);
  const int64_t batch = x.shape()[0], channels = x.shape()[1];
  const int64_t cg = channels / a.group, mg = w.shape()[1], filters = mg * a.group;
  const int64_t taps = mg * g.kernel_size(), in_size = g.in_size(), out_size = g.out_size();
  std::vector<float> col(taps * in_size);

  float* yd = y.data<float>();
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < filters; ++m) {
      float* plane = yd + (n * filters + m) * out_size;
      std::fill(plane, plane + out_size, has_bias ? args.inputs[2].data<float>()[m] : 0.f);
    }
    for (int64_t gi = 0; gi < a.group; ++gi) {
      // col = W_g^T * X_g, where W_g (cg x taps) holds this group's rows of W.
      const MatrixRef wt{w.data<float>() + gi * cg * taps, taps, true};
      const MatrixRef xg{x.data<float>() + (n * channels + gi * cg) * in_size, in_size, false};
      gemm_f32(taps, in_size, cg, 1.f, wt, xg, 0.f, col.data(), in_size);
      col2im(col.data(), mg, g, yd + (n * filters + gi * mg) * out_size);
    }
  }
  return absl::OkStatus();
}

}  // namespace

void register_conv_transpose_op(OpRegistry& r) {
  add_builtin(r, make_op<ConvTransposeAttrs>("ConvTranspose", FusionKind::out_elementwise_fusable,
                                             2, 3, infer_conv_transpose, conv_transpose_reference));
}

}  // namespace collage::ops
