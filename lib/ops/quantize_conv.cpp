// ConvInteger (ONNX 10) and QLinearConv (ONNX 10): convolutions of 8-bit integers with zero
// points, accumulated exactly in int64. ConvInteger gives the i32 sums; QLinearConv adds the i32
// bias and requantises with x_scale * w_scale / y_scale computed in the scales' float type, as
// QLinearMatMul does (halves round to even).
#include <algorithm>
#include <cmath>

#include "collage/ops/nn.h"
#include "ops/elementwise_common.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"

namespace collage::ops {
namespace {

constexpr TypeSet k8Bit = type_bit(DType::u8) | type_bit(DType::i8);

struct IntConv {
  int64_t N, C, M, group;
  Window window;
};

absl::StatusOr<IntConv> int_conv_geometry(const ConvAttrs& a, const Shape& x, const Shape& w) {
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size())
    return absl::InvalidArgumentError(str_cat("x ", shape_to_string(x), " and w ",
                                              shape_to_string(w), " must be N x C x 1-3 spatial "
                                              "axes and M x C/group x kernel"));
  IntConv g{x[0], x[1], w[0], a.group, {}};
  if (g.group < 1 || g.C % g.group != 0 || w[1] * g.group != g.C || g.M % g.group != 0)
    return absl::InvalidArgumentError(str_cat("group ", g.group, " does not fit x's ", g.C,
                                              " channels and w ", shape_to_string(w)));
  const Shape kernel(w.begin() + 2, w.end());
  if (!a.kernel_shape.empty() && a.kernel_shape != kernel)
    return absl::InvalidArgumentError(str_cat("kernel_shape ", list_to_string(a.kernel_shape),
                                              " differs from w's ", shape_to_string(w)));
  auto win = resolve_window(spatial_dims(x), kernel,
                            {a.auto_pad, a.strides, a.dilations, a.pads, false});
  if (!win.ok()) return win.status();
  g.window = *win;
  return g;
}

absl::StatusOr<Shape> int_conv_shape(const InferContext& ctx, int ix, int iw) {
  auto g = int_conv_geometry(ctx.attrs<ConvAttrs>(), ctx.input(ix).shape, ctx.input(iw).shape);
  if (!g.ok()) return node_error(ctx, g.status());
  Shape out = {g->N, g->M};
  out.insert(out.end(), g->window.out.begin(), g->window.out.end());
  return out;
}

// A zero point: absent, one value, or (`per` > 1) one per channel.
absl::Status check_zero_point(const InferContext& ctx, int i, DType t, int64_t per,
                              std::string_view name) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const TensorType& z = ctx.input(i);
  if (z.dtype != t)
    return ctx.error(str_cat(name, " has type ", dtype_name(z.dtype), ", its tensor ",
                             dtype_name(t)));
  if (z.numel() != 1 && !(z.shape == Shape{per}))
    return ctx.error(str_cat(name, " has shape ", shape_to_string(z.shape),
                             ", expected one value or ", per));
  return absl::OkStatus();
}

// sum[(n, m, o)] = sum over the group's channels and taps of (x - xz) * (w - wz[m]).
std::vector<int64_t> int_conv(const IntConv& g, const Tensor& x, const Tensor* xz, const Tensor& w,
                              const Tensor* wz, const Shape& out) {
  const Window3 s = to_3d(g.window);
  const int64_t cpg = g.C / g.group, mpg = g.M / g.group;
  const int64_t K = s.kernel_size(), P = s.out_size(), I = s.in_size();
  const int64_t xzero = xz && !xz->empty() ? xz->get_as_int64(0) : 0;
  std::vector<int64_t> xv(static_cast<size_t>(x.numel())), wv(static_cast<size_t>(w.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xv[i] = x.get_as_int64(i) - xzero;
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t m = i / (cpg * K);
    wv[i] = w.get_as_int64(i) -
            (wz && !wz->empty() ? wz->get_as_int64(wz->numel() == 1 ? 0 : m) : 0);
  }
  std::vector<int64_t> y(static_cast<size_t>(shape_numel(out)), 0);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) {
      const int64_t c0 = m / mpg * cpg;
      for (int64_t od = 0; od < s.out[0]; ++od)
        for (int64_t oh = 0; oh < s.out[1]; ++oh)
          for (int64_t ow = 0; ow < s.out[2]; ++ow) {
            int64_t acc = 0;
            const int64_t sd = od * s.stride[0] - s.pad[0], sh = oh * s.stride[1] - s.pad[1],
                          sw = ow * s.stride[2] - s.pad[2];
            for (int64_t c = 0; c < cpg; ++c) {
              const int64_t* xp = xv.data() + (n * g.C + c0 + c) * I;
              const int64_t* wp = wv.data() + (m * cpg + c) * K;
              for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
                const int64_t d = sd + kd * s.dilation[0];
                if (d < 0 || d >= s.in[0]) continue;
                for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                  const int64_t h = sh + kh * s.dilation[1];
                  if (h < 0 || h >= s.in[1]) continue;
                  for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                    const int64_t v = sw + kw * s.dilation[2];
                    if (v < 0 || v >= s.in[2]) continue;
                    acc += xp[(d * s.in[1] + h) * s.in[2] + v] *
                           wp[(kd * s.kernel[1] + kh) * s.kernel[2] + kw];
                  }
                }
              }
            }
            y[((n * g.M + m) * P) + (od * s.out[1] + oh) * s.out[2] + ow] = acc;
          }
    }
  return y;
}

const Tensor* optional_input(const KernelArgs& args, size_t i) {
  return args.inputs.size() > i && !args.inputs[i].empty() ? &args.inputs[i] : nullptr;
}

absl::Status infer_conv_integer(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  for (int i : {0, 1})
    if (absl::Status s = check_dtype(ctx, i, k8Bit); !s.ok()) return s;
  auto out = int_conv_shape(ctx, 0, 1);
  if (!out.ok()) return out.status();
  if (absl::Status s = check_zero_point(ctx, 2, ctx.input(0).dtype, 1, "x_zero_point"); !s.ok())
    return s;
  if (absl::Status s = check_zero_point(ctx, 3, ctx.input(1).dtype, (*out)[1], "w_zero_point");
      !s.ok())
    return s;
  ctx.set_output(0, {DType::i32, *out});
  return absl::OkStatus();
}

absl::Status conv_integer_kernel(const KernelArgs& args) {
  auto g = int_conv_geometry(args.get<ConvAttrs>(), args.inputs[0].shape(),
                             args.inputs[1].shape());
  if (!g.ok()) return g.status();
  const auto y = int_conv(*g, args.inputs[0], optional_input(args, 2), args.inputs[1],
                          optional_input(args, 3), args.outputs[0].shape());
  int32_t* out = args.outputs[0].data<int32_t>();
  for (size_t i = 0; i < y.size(); ++i) out[i] = static_cast<int32_t>(y[i]);
  return absl::OkStatus();
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, [B]).
absl::Status infer_qlinear_conv(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  for (int i : {0, 3, 7})
    if (absl::Status s = check_dtype(ctx, i, k8Bit); !s.ok()) return s;
  for (int i : {1, 4, 6})
    if (absl::Status s = check_dtype(ctx, i, type_bit(DType::f32)); !s.ok()) return s;
  auto out = int_conv_shape(ctx, 0, 3);
  if (!out.ok()) return out.status();
  const int64_t M = (*out)[1];
  if (absl::Status s = check_zero_point(ctx, 2, ctx.input(0).dtype, 1, "x_zero_point"); !s.ok())
    return s;
  if (absl::Status s = check_zero_point(ctx, 5, ctx.input(3).dtype, M, "w_zero_point"); !s.ok())
    return s;
  if (absl::Status s = check_zero_point(ctx, 7, ctx.input(7).dtype, 1, "y_zero_point"); !s.ok())
    return s;
  for (int i : {1, 6})
    if (ctx.input(i).numel() != 1)
      return ctx.error(str_cat("input ", i, " (a scale) must be a single value"));
  if (ctx.input(4).numel() != 1 && !(ctx.input(4).shape == Shape{M}))
    return ctx.error(str_cat("w_scale has shape ", shape_to_string(ctx.input(4).shape),
                             ", expected one value or ", M));
  if (ctx.has_input(8) && (ctx.input(8).dtype != DType::i32 || !(ctx.input(8).shape == Shape{M})))
    return ctx.error(str_cat("B is ", type_to_string(ctx.input(8)), ", expected i32 [", M, "]"));
  ctx.set_output(0, {ctx.input(7).dtype, *out});
  return absl::OkStatus();
}

absl::Status qlinear_conv_kernel(const KernelArgs& args) {
  const auto& in = args.inputs;
  Tensor& out = args.outputs[0];
  auto g = int_conv_geometry(args.get<ConvAttrs>(), in[0].shape(), in[3].shape());
  if (!g.ok()) return g.status();
  const auto acc = int_conv(*g, in[0], &in[2], in[3], &in[5], out.shape());
  const Tensor* bias = optional_input(args, 8);
  const int64_t P = g->M == 0 || g->N == 0 ? 0 : out.numel() / (g->N * g->M);
  // Plain variables, not a structured binding: the lambda below captures them (clang 14, which
  // builds the fuzzer, does not capture bindings).
  const bool u8 = out.dtype() == DType::u8;
  const double lo = u8 ? 0.0 : -128.0, hi = u8 ? 255.0 : 127.0;
  const float xs = in[1].data<float>()[0], ys = in[6].data<float>()[0];
  const double yz = static_cast<double>(in[7].get_as_int64(0));
  return dispatch_codec<k8Bit>(out.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* y = out.data<typename C::Storage>();
    for (size_t i = 0; i < acc.size(); ++i) {
      const int64_t m = P ? static_cast<int64_t>(i) / P % g->M : 0;
      const float ws = in[4].data<float>()[in[4].numel() == 1 ? 0 : m];
      const float mult = xs * ws / ys;
      const int64_t sum = acc[i] + (bias ? bias->data<int32_t>()[m] : 0);
      const double v = std::nearbyint(static_cast<double>(static_cast<float>(sum) * mult)) + yz;
      y[i] = C::store(static_cast<typename C::Compute>(std::clamp(v, lo, hi)));
    }
  });
}

}  // namespace

void register_quantized_conv_ops(OpRegistry& r) {
  add_builtin_op(r, make_op<ConvAttrs>("ConvInteger", FusionKind::opaque, 2, 4,
                                       infer_conv_integer, conv_integer_kernel));
  add_builtin_op(r, make_op<ConvAttrs>("QLinearConv", FusionKind::opaque, 8, 9,
                                       infer_qlinear_conv, qlinear_conv_kernel));
}

}  // namespace collage::ops
