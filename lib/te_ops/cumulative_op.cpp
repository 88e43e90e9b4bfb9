// TE computes of CumSum and CumProd (lib/ops/tensor_index.cpp): each output element reduces the
// elements before it (or after it, reverse) along the axis, itself included unless exclusive.
// The axis is an input read at run time, a constant of the graph too: every axis is generated,
// each guarded by a test of the value read (native keys its code by the group's signature, which
// leaves constant values out, so code must not depend on them). Quadratic in the axis length, as
// a reduction per element.
#include "collage/ops/indexing.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Outputs cumulative(const Graph& g, const Node& node, std::span<const te::Tensor> in,
                   te::ReduceOp op) {
  te::Tensor x = in[0], axis = in[1];
  const auto& a = node.get<CumSumAttrs>();
  const TensorType& out = output_type(g, node);
  const int64_t rank = x.ndim();
  if (x.dtype() == DType::boolean) return node_error(node, "bool inputs are not supported");
  int64_t longest = 0;
  for (int64_t d = 0; d < rank; ++d) longest = std::max(longest, x.shape()[d]);
  const std::string name = tensor_name(node);
  te::Tensor acc = te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        te::IterVar r = te::reduce_axis({0, longest}, "r");
        Expr k = r.var();
        Expr given = cast_to(DType::i64, axis(std::vector<Expr>(axis.ndim(), Expr(int64_t{0}))));
        Expr none;
        Expr v;
        for (int64_t d = rank - 1; d >= 0; --d) {
          const int64_t len = x.shape()[d];
          Expr at = cast_to(DType::i64, i[d]);
          Expr in_range = a.reverse ? (a.exclusive ? k > at : k >= at)
                                    : (a.exclusive ? k < at : k <= at);
          Expr chosen = (given == Expr(d) || given == Expr(d - rank)) && in_range;
          if (len < longest) chosen = chosen && k < Expr(len);
          std::vector<Expr> idx = as_exprs(i);
          idx[d] = clamp_index(k, len);
          Expr value = load_f32(x, idx);
          if (!none.defined()) none = te::reduce_identity(op, value.dtype());
          v = te::select(chosen, value, v.defined() ? v : none);
        }
        return te::reduce(op, v, {r});
      },
      name + ".acc");
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) { return cast_to(out.dtype, acc(as_exprs(i))); }, name)};
}

}  // namespace

void register_cumulative_ops(TeOpRegistry& r) {
  r.add("CumSum", {[](const Graph& g, const Node& n, std::span<const te::Tensor> in) {
                     return cumulative(g, n, in, te::ReduceOp::sum);
                   }, nullptr});
  r.add("CumProd", {[](const Graph& g, const Node& n, std::span<const te::Tensor> in) {
                      return cumulative(g, n, in, te::ReduceOp::prod);
                    }, nullptr});
}

}  // namespace collage::te_ops
