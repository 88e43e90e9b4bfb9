// DeformConv (ONNX 19 and 22, 2-D, f32) in the reference executor: the deformed taps are
// gathered into columns (bilinear samples times the mask), then each group is one GEMM with its
// weights, as an im2col convolution is.
#include <cmath>

#include "collage/ops/geometry.h"
#include "core/str_cat.h"
#include "ops/gemm_ref.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

struct Geometry {
  int64_t N, C, H, W, M, kh, kw, oh, ow, group, offset_group;
  Window window;
};

absl::StatusOr<Geometry> geometry(const DeformConvAttrs& a, const Shape& x, const Shape& w) {
  if (x.size() != 4 || w.size() != 4)
    return absl::InvalidArgumentError(str_cat("X ", list_to_string(x), " and W ",
                                              list_to_string(w), " must be 4-D; collage runs "
                                              "the 2-D DeformConv"));
  Geometry g{x[0], x[1], x[2], x[3], w[0], w[2], w[3], 0, 0, a.group, a.offset_group, {}};
  if (!a.kernel_shape.empty() && a.kernel_shape != Shape{w[2], w[3]})
    return absl::InvalidArgumentError(str_cat("kernel_shape ", list_to_string(a.kernel_shape),
                                              " differs from W's ", list_to_string(w)));
  int64_t grouped = 0;
  if (g.group < 1 || g.C % g.group != 0 || __builtin_mul_overflow(w[1], g.group, &grouped) ||
      grouped != g.C || g.M % g.group != 0)
    return absl::InvalidArgumentError(str_cat("group ", g.group, " does not fit X's ", g.C,
                                              " channels and W ", list_to_string(w)));
  if (g.offset_group < 1 || g.C % g.offset_group != 0)
    return absl::InvalidArgumentError(str_cat("offset_group ", g.offset_group,
                                              " does not divide the ", g.C, " channels"));
  auto win = resolve_window({g.H, g.W}, {g.kh, g.kw}, {"NOTSET", a.strides, a.dilations, a.pads});
  if (!win.ok()) return win.status();
  g.window = *win;
  g.oh = win->out[0], g.ow = win->out[1];
  return g;
}

absl::Status infer_deform_conv(InferContext& ctx) {
  if (absl::Status s = require_f32(ctx, {"X", "W", "offset", "B", "mask"}); !s.ok()) return s;
  if (ctx.requested_outputs() > 1)
    return ctx.error(str_cat(ctx.requested_outputs(), " outputs requested; the operator has 1"));
  auto g = geometry(ctx.attrs<DeformConvAttrs>(), ctx.input(0).shape, ctx.input(1).shape);
  if (!g.ok()) return node_error(ctx, g.status());
  const int64_t taps = g->offset_group * g->kh * g->kw;
  auto expect = [&](int i, const char* name, Shape want) -> absl::Status {
    if (!ctx.has_input(i) || ctx.input(i).shape == want) return absl::OkStatus();
    return ctx.error(str_cat("input ", name, " has shape ", list_to_string(ctx.input(i).shape),
                             ", expected ", list_to_string(want)));
  };
  if (absl::Status s = expect(2, "offset", {g->N, 2 * taps, g->oh, g->ow}); !s.ok()) return s;
  if (absl::Status s = expect(3, "B", {g->M}); !s.ok()) return s;
  if (absl::Status s = expect(4, "mask", {g->N, taps, g->oh, g->ow}); !s.ok()) return s;
  ctx.set_output(0, {DType::f32, {g->N, g->M, g->oh, g->ow}});
  return absl::OkStatus();
}

// X's plane sampled at (h, w) with bilinear weights; taps outside the plane count as zero.
float bilinear(const float* plane, int64_t H, int64_t W, double h, double w) {
  if (!(h > -1 && h < H && w > -1 && w < W)) return 0.f;
  const double h0 = std::floor(h), w0 = std::floor(w);
  const double dh = h - h0, dw = w - w0;
  const auto ih = static_cast<int64_t>(h0), iw = static_cast<int64_t>(w0);
  auto at = [&](int64_t y, int64_t x) {
    return y >= 0 && y < H && x >= 0 && x < W ? static_cast<double>(plane[y * W + x]) : 0.0;
  };
  return static_cast<float>((1 - dh) * ((1 - dw) * at(ih, iw) + dw * at(ih, iw + 1)) +
                            dh * ((1 - dw) * at(ih + 1, iw) + dw * at(ih + 1, iw + 1)));
}

absl::Status deform_conv_reference(const KernelArgs& args) {
  const auto& a = args.get<DeformConvAttrs>();
  const Tensor& x = args.inputs[0];
  const Tensor& wt = args.inputs[1];
  auto gr = geometry(a, x.shape(), wt.shape());
  if (!gr.ok()) return gr.status();
  const Geometry& g = *gr;
  const float* offset = args.inputs[2].data<float>();
  const bool has_bias = args.inputs.size() > 3 && !args.inputs[3].empty();
  const bool has_mask = args.inputs.size() > 4 && !args.inputs[4].empty();
  const float* mask = has_mask ? args.inputs[4].data<float>() : nullptr;
  float* y = args.outputs[0].data<float>();
  const int64_t K = g.kh * g.kw, P = g.oh * g.ow;
  const int64_t cpg = g.C / g.group, mpg = g.M / g.group, cpo = g.C / g.offset_group;
  const Window& win = g.window;
  // columns[(c * K + k) * P + p]: channel c's tap k at output point p.
  std::vector<float> columns(static_cast<size_t>(g.C * K * P));
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t c = 0; c < g.C; ++c) {
      const float* plane = x.data<float>() + (n * g.C + c) * g.H * g.W;
      const int64_t og = c / cpo;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t ki = k / g.kw, kj = k % g.kw;
        const float* off_h = offset + ((n * g.offset_group + og) * K * 2 + 2 * k) * P;
        const float* off_w = off_h + P;
        const float* m = has_mask ? mask + ((n * g.offset_group + og) * K + k) * P : nullptr;
        float* col = columns.data() + (c * K + k) * P;
        for (int64_t i = 0; i < g.oh; ++i)
          for (int64_t j = 0; j < g.ow; ++j) {
            const int64_t p = i * g.ow + j;
            const double h = static_cast<double>(i * win.stride[0] - win.pad_begin[0] +
                                                 ki * win.dilation[0]) + off_h[p];
            const double w = static_cast<double>(j * win.stride[1] - win.pad_begin[1] +
                                                 kj * win.dilation[1]) + off_w[p];
            const float v = bilinear(plane, g.H, g.W, h, w);
            col[p] = m ? v * m[p] : v;
          }
      }
    }
    for (int64_t gi = 0; gi < g.group; ++gi) {
      float* out = y + (n * g.M + gi * mpg) * P;
      gemm_f32(mpg, P, cpg * K, 1.f, {wt.data<float>() + gi * mpg * cpg * K, cpg * K, false},
               {columns.data() + gi * cpg * K * P, P, false}, 0.f, out, P);
      if (has_bias)
        for (int64_t mo = 0; mo < mpg; ++mo)
          for (int64_t p = 0; p < P; ++p)
            out[mo * P + p] += args.inputs[3].data<float>()[gi * mpg + mo];
    }
  }
  return absl::OkStatus();
}

}  // namespace

void register_deform_conv_op(OpRegistry& r) {
  add_builtin(r, make_op<DeformConvAttrs>("DeformConv", FusionKind::opaque, 3, 5,
                                          infer_deform_conv, deform_conv_reference));
}

}  // namespace collage::ops
