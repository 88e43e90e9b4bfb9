// TE compute of ConvInteger (ONNX 10; lib/ops/quantize_conv.cpp defines it): 8-bit inputs less
// their zero points (one value, or one per output channel for the weights), multiplied and
// summed in i32 over the group's channels and the kernel taps; taps in the padding are masked.
// The native backend generates code for both 8-bit types. QLinearConv requantises the sums.
#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/nn_window.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;

// Element m of a one-value or per-output-channel vector `v`, as stored.
Expr per_channel(const te::Tensor& v, const Expr& m) {
  std::vector<Expr> idx;
  if (v.ndim() == 1) idx.push_back(v.shape()[0] == 1 ? Expr(int64_t{0}) : m);
  for (int64_t k = 1; k < v.ndim(); ++k) idx.push_back(int64_t{0});
  return v(idx);
}

// Zero point `zp` (undefined: 0) for output channel m, as i32.
Expr zero_point(const te::Tensor& zp, const Expr& m) {
  if (!zp.defined()) return te::make_const(DType::i32, 0);
  return cast_to(DType::i32, per_channel(zp, m));
}

// A scale for output channel m (one value or one per channel), as f32.
Expr scale_f32(const te::Tensor& scale, const Expr& m) {
  return cast_to(DType::f32, per_channel(scale, m));
}

// The i32 sums of (x - xz) * (w - wz) over each output's channels and taps.
absl::StatusOr<te::Tensor> int_conv_sums(const Node& node, const te::Tensor& x,
                                         const te::Tensor& xz, const te::Tensor& w,
                                         const te::Tensor& wz, const Shape& out,
                                         const std::string& name) {
  const auto& a = node.get<ConvAttrs>();
  for (const te::Tensor& t : {x, w})
    if (t.dtype() != DType::u8 && t.dtype() != DType::i8)
      return node_error(node, "only 8-bit integer inputs are supported");
  const Shape spatial(x.shape().begin() + 2, x.shape().end());
  const Shape kernel(w.shape().begin() + 2, w.shape().end());
  auto win = ops::resolve_window(spatial, kernel, {a.auto_pad, a.strides, a.dilations, a.pads});
  if (!win.ok()) return node_error(node, std::string(win.status().message()));
  const int64_t rank = win->rank(), cg = w.shape()[1], mg = w.shape()[0] / a.group;
  te::IterVar rc = te::reduce_axis({0, cg}, "rc");
  std::vector<te::IterVar> all = {rc};
  for (int64_t k = 0; k < rank; ++k) all.push_back(te::reduce_axis({0, kernel[k]}, str_cat("k", k)));
  return te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        Expr m = i[1];
        Expr c = a.group == 1 ? Expr(rc) : te::floordiv(m, mg) * cg + Expr(rc);
        std::vector<Expr> xi = {i[0], c}, wi = {m, Expr(rc)};
        Expr valid = true;
        for (int64_t k = 0; k < rank; ++k) {
          Expr pos = i[2 + k] * win->stride[k] - win->pad_begin[k] +
                     Expr(all[1 + k]) * win->dilation[k];
          valid = te::logical_and(valid, te::logical_and(pos >= int64_t{0}, pos < win->in[k]));
          xi.push_back(clamp_index(pos, win->in[k]));
          wi.push_back(all[1 + k]);
        }
        Expr xv = cast_to(DType::i32, x(xi)) - zero_point(xz, int64_t{0});
        Expr wv = cast_to(DType::i32, w(wi)) - zero_point(wz, m);
        return te::sum(te::select(valid, xv * wv, te::make_const(DType::i32, 0)), all);
      },
      name);
}

absl::StatusOr<std::vector<te::Tensor>> conv_integer(const Graph& g, const Node& node,
                                                     std::span<const te::Tensor> in) {
  te::Tensor xz = in.size() > 2 ? in[2] : te::Tensor(), wz = in.size() > 3 ? in[3] : te::Tensor();
  auto sums = int_conv_sums(node, in[0], xz, in[1], wz, output_type(g, node).shape,
                            tensor_name(node));
  if (!sums.ok()) return sums.status();
  return std::vector<te::Tensor>{*sums};
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, [B]):
// the sums plus the i32 bias, times x_scale * w_scale / y_scale in f32, rounded half to even,
// plus y_zero_point, saturated, as the reference computes it.
absl::StatusOr<std::vector<te::Tensor>> qlinear_conv(const Graph& g, const Node& node,
                                                     std::span<const te::Tensor> in) {
  const TensorType& out = output_type(g, node);
  if (out.dtype != DType::u8 && out.dtype != DType::i8)
    return node_error(node, "only 8-bit outputs are supported");
  for (int i : {1, 4, 6})
    if (in[i].dtype() != DType::f32) return node_error(node, "only f32 scales are supported");
  const std::string name = tensor_name(node);
  auto sums = int_conv_sums(node, in[0], in[2], in[3], in[5], out.shape, name + ".sum");
  if (!sums.ok()) return sums.status();
  const te::Tensor acc = *sums;
  const te::Tensor bias = in.size() > 8 ? in[8] : te::Tensor();
  const double lo = out.dtype == DType::u8 ? 0 : -128, hi = out.dtype == DType::u8 ? 255 : 127;
  auto f32 = [](double v) { return te::make_const(DType::f32, v); };
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr m = i[1];
        Expr sum = acc(std::vector<Expr>(i.begin(), i.end()));
        if (bias.defined()) sum = sum + bias({m});
        Expr mult = in[1](std::vector<Expr>(in[1].ndim(), Expr(int64_t{0}))) *
                    scale_f32(in[4], m) /
                    in[6](std::vector<Expr>(in[6].ndim(), Expr(int64_t{0})));
        Expr v = te::round(cast_to(DType::f32, sum) * mult) +
                 cast_to(DType::f32, zero_point(in[7], int64_t{0}));
        return cast_to(out.dtype, te::minimum(te::maximum(v, f32(lo)), f32(hi)));
      },
      name)};
}

}  // namespace

void register_conv_integer_op(TeOpRegistry& r) {
  r.add("ConvInteger", {conv_integer, nullptr});
  r.add("QLinearConv", {qlinear_conv, nullptr});
}

}  // namespace collage::te_ops
