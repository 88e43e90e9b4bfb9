// TE computes of Hardmax and LpNormalization along one axis (lib/ops/nn_norm_extra.cpp defines
// them), in f32.
#include "collage/ops/nn.h"
#include "collage/ops/normalization.h"
#include "core/str_cat.h"
#include "te_ops/reduce_util.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

// 1 at the first maximum along the axis, 0 elsewhere (a row whose maximum is NaN marks its
// first element).
Outputs hardmax(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  auto axis = normalize_axis(node, node.get<SoftmaxAttrs>().axis, x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<bool> reduced(x.ndim(), false);
  reduced[*axis] = true;
  const int64_t n = x.shape()[*axis];
  const std::string name = tensor_name(node);
  te::Tensor m = reduce_over(
      x.shape(), reduced, true, te::ReduceOp::max,
      [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, name + ".max");
  te::Tensor pos = reduce_over(
      x.shape(), reduced, true, te::ReduceOp::min,
      [&](const std::vector<Expr>& idx) {
        return te::select(load_f32(x, idx) == m(stat_index(idx, reduced)), idx[*axis], Expr(n));
      },
      name + ".pos");
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        Expr p = pos(stat_index(idx, reduced));
        Expr first = te::select(p == Expr(n), Expr(int64_t{0}), p);
        return te::select(idx[*axis] == first, te::make_const(out.dtype, 1),
                          te::make_const(out.dtype, 0));
      },
      name)};
}

// x / ||x||_p along the axis (p 1 or 2); 0 where the norm is 0.
Outputs lp_norm(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<LpNormalizationAttrs>();
  te::Tensor x = in[0];
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  if (a.p != 1 && a.p != 2) return node_error(node, str_cat("p is ", a.p, ", expected 1 or 2"));
  auto axis = normalize_axis(node, a.axis, x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<bool> reduced(x.ndim(), false);
  reduced[*axis] = true;
  te::Tensor total = reduce_over(
      x.shape(), reduced, true, te::ReduceOp::sum,
      [&](const std::vector<Expr>& idx) {
        Expr v = load_f32(x, idx);
        return a.p == 1 ? te::fabs(v) : v * v;
      },
      tensor_name(node) + ".norm");
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        Expr norm = total(stat_index(idx, reduced));
        if (a.p == 2) norm = te::sqrt(norm);
        const Expr zero = te::make_const(DType::f32, 0);
        return cast_to(out.dtype, te::select(norm == zero, zero, load_f32(x, idx) / norm));
      },
      tensor_name(node))};
}

}  // namespace

void register_norm_extra_ops(TeOpRegistry& r) {
  r.add("Hardmax", {hardmax, nullptr});
  r.add("LpNormalization", {lp_norm, nullptr});
}

}  // namespace collage::te_ops
