// TE compute of ConvInteger (ONNX 10; lib/ops/quantize_conv.cpp defines it): 8-bit inputs less
// their zero points (one value, or one per output channel for the weights), multiplied and
// summed in i32 over the group's channels and the kernel taps; taps in the padding are masked.
// The native backend generates code for both 8-bit types.
#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/nn_window.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;

// Zero point `zp` (undefined: 0) for output channel m, as i32.
Expr zero_point(const te::Tensor& zp, const Expr& m) {
  if (!zp.defined()) return te::make_const(DType::i32, 0);
  std::vector<Expr> idx;
  if (zp.ndim() == 1) idx.push_back(zp.shape()[0] == 1 ? Expr(int64_t{0}) : m);
  for (int64_t k = 1; k < zp.ndim(); ++k) idx.push_back(int64_t{0});
  return cast_to(DType::i32, zp(idx));
}

absl::StatusOr<std::vector<te::Tensor>> conv_integer(const Graph& g, const Node& node,
                                                     std::span<const te::Tensor> in) {
  const auto& a = node.get<ConvAttrs>();
  te::Tensor x = in[0], w = in[1];
  te::Tensor xz = in.size() > 2 ? in[2] : te::Tensor(), wz = in.size() > 3 ? in[3] : te::Tensor();
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
  return std::vector<te::Tensor>{te::compute(
      output_type(g, node).shape,
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
      tensor_name(node))};
}

}  // namespace

void register_conv_integer_op(TeOpRegistry& r) { r.add("ConvInteger", {conv_integer, nullptr}); }

}  // namespace collage::te_ops
