// TE computes of the normalisations over groups and windows that lib/ops/nn_norm_extra.cpp
// defines: MeanVarianceNormalization, GroupNormalization, LRN and GlobalMaxPool, on float
// inputs with statistics in f32 (the reference computes in double).
#include "collage/ops/normalization.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Expr f32(double v) { return te::make_const(DType::f32, v); }

// (x - mean) / (sqrt(var) + 1e-9) over the listed axes (ONNX's definition), in two passes.
Outputs mvn(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  std::vector<bool> reduced(x.ndim(), false);
  int64_t count = 1;
  for (int64_t a : node.get<MeanVarianceNormalizationAttrs>().axes) {
    auto k = normalize_axis(node, a, x.ndim());
    if (!k.ok()) return k.status();
    if (!reduced[*k]) count *= x.shape()[*k];
    reduced[*k] = true;
  }
  const Expr inv_n = f32(count ? 1.0 / static_cast<double>(count) : 0.0);
  const std::string name = tensor_name(node);
  auto at = [&](const std::vector<Expr>& idx) { return load_f32(x, idx); };
  te::Tensor sum = reduce_over(x.shape(), reduced, true, te::ReduceOp::sum, at, name + ".sum");
  te::Tensor sq = squared_deviations(x.shape(), reduced, true, inv_n, at, name + ".sq");
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        std::vector<Expr> si = stat_index(idx, reduced);
        return cast_to(out.dtype, (load_f32(x, idx) - sum(si) * inv_n) /
                                      (te::sqrt(sq(si) * inv_n) + f32(1e-9)));
      },
      name)};
}

// X [N, C, spatial...] normalised over each group of C / num_groups channels and the spatial
// axes, then scaled and shifted per channel. The statistics reduce a view [N, G, C / G, S].
Outputs group_norm(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<GroupNormalizationAttrs>();
  te::Tensor x = in[0], scale = in[1], bias = in[2];
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  const Shape& xs = x.shape();
  if (xs.size() < 2 || a.num_groups < 1 || xs[1] % a.num_groups)
    return node_error(node, str_cat("num_groups ", a.num_groups, " does not divide the channels"));
  const int64_t groups = a.num_groups, per = xs[1] / groups;
  const Shape spatial(xs.begin() + 2, xs.end());
  int64_t size = 1;
  for (int64_t d : spatial) size *= d;
  const Shape view = {xs[0], groups, per, size};
  const std::vector<bool> reduced = {false, false, true, true};
  // Element (n, group, c, s) of the view in x.
  auto at = [&](const std::vector<Expr>& v) {
    std::vector<Expr> idx = {v[0], v[1] * Expr(per) + v[2]};
    for (const Expr& e : unravel(v[3], spatial)) idx.push_back(e);
    return load_f32(x, idx);
  };
  const int64_t count = per * size;
  const Expr inv_n = f32(count != 0 ? 1.0 / static_cast<double>(count) : 0.0);
  const std::string name = tensor_name(node);
  te::Tensor sum = reduce_over(view, reduced, true, te::ReduceOp::sum, at, name + ".sum");
  te::Tensor sq = squared_deviations(view, reduced, true, inv_n, at, name + ".sq");
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        const std::vector<Expr> si = {idx[0], te::div(idx[1], Expr(per)), Expr(int64_t{0}),
                                      Expr(int64_t{0})};
        Expr y = (load_f32(x, idx) - sum(si) * inv_n) * te::rsqrt(sq(si) * inv_n + f32(a.epsilon));
        // 16-bit: the normalised value and its product with the scale rounded to the type, as
        // ONNX's definition (stash_type 1) and the reference round them.
        y = round16(out.dtype, round16(out.dtype, y) * load_f32(scale, {idx[1]}));
        return cast_to(out.dtype, y + load_f32(bias, {idx[1]}));
      },
      name)};
}

// x / (bias + alpha / size * sum of squares over the channel window)^beta; the window reaches
// floor((size - 1) / 2) channels below and the rest above.
Outputs lrn(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<LRNAttrs>();
  te::Tensor x = in[0];
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  if (x.ndim() < 2 || a.size < 1) return node_error(node, "input must be N x C x ... and size >= 1");
  const int64_t lo = (a.size - 1) / 2, channels = x.shape()[1];
  const std::string name = tensor_name(node);
  te::IterVar k = te::reduce_axis({0, a.size}, "k");
  te::Tensor sq = te::compute(
      x.shape(),
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        Expr c = idx[1] - Expr(lo) + Expr(k);
        idx[1] = clamp_index(c, channels);
        Expr v = load_f32(x, idx);
        Expr inside = (c >= Expr(int64_t{0})) && (c < Expr(channels));
        return te::sum(te::select(inside, v * v, f32(0)), {k});
      },
      name + ".sq");
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        Expr d = f32(a.bias) + f32(a.alpha / static_cast<double>(a.size)) * sq(idx);
        return cast_to(out.dtype, load_f32(x, idx) / te::pow(d, f32(a.beta)));
      },
      name)};
}

// The maximum over the spatial axes, kept with size 1.
Outputs global_max_pool(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  if (x.ndim() < 3) return node_error(node, "input must be N x C x spatial axes");
  std::vector<bool> reduced(x.ndim(), true);
  reduced[0] = reduced[1] = false;
  const std::string name = tensor_name(node);
  te::Tensor m = reduce_over(
      x.shape(), reduced, true, te::ReduceOp::max,
      [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, name + ".max");
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape, [&](const std::vector<te::Var>& i) { return cast_to(out.dtype, m(as_exprs(i))); },
      name)};
}

}  // namespace

void register_norm_window_ops(TeOpRegistry& r) {
  r.add("MeanVarianceNormalization", {mvn, nullptr});
  r.add("GroupNormalization", {group_norm, nullptr});
  r.add("LRN", {lrn, nullptr});
  r.add("GlobalMaxPool", {global_max_pool, nullptr});
}

}  // namespace collage::te_ops
