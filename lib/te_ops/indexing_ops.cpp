// TE computes of the operators whose elements are chosen by their index (lib/ops/
// tensor_index.cpp): Trilu (k read at run time, so a computed k works too) and EyeLike.
#include "collage/ops/indexing.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Outputs trilu(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  te::Tensor k = in.size() > 1 ? in[1] : te::Tensor();
  const bool upper = node.get<TriluAttrs>().upper != 0;
  const TensorType& out = output_type(g, node);
  const size_t rank = out.shape.size();
  if (rank < 2) return node_error(node, "input rank must be at least 2");
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr diag = k.defined() ? cast_to(DType::i64, k(std::vector<Expr>(k.ndim(), Expr(int64_t{0}))))
                                : Expr(int64_t{0});
        Expr d = cast_to(DType::i64, i[rank - 1]) - cast_to(DType::i64, i[rank - 2]);
        Expr keep = upper ? d >= diag : d <= diag;
        Expr v = x(std::vector<Expr>(i.begin(), i.end()));
        return te::select(keep, v, te::make_const(v.dtype(), 0));
      },
      tensor_name(node))};
}

// Ones on the k-th diagonal of a 2-D output, zeros elsewhere.
Outputs eye_like(const Graph& g, const Node& node, std::span<const te::Tensor>) {
  const TensorType& out = output_type(g, node);
  if (out.shape.size() != 2) return node_error(node, "output rank must be 2");
  const int64_t k = node.get<EyeLikeAttrs>().k;
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr on = cast_to(DType::i64, i[1]) - cast_to(DType::i64, i[0]) == Expr(k);
        return te::select(on, te::make_const(out.dtype, 1), te::make_const(out.dtype, 0));
      },
      tensor_name(node))};
}

}  // namespace

void register_indexing_ops(TeOpRegistry& r) {
  r.add("Trilu", {trilu, nullptr});
  r.add("EyeLike", {eye_like, nullptr});
}

}  // namespace collage::te_ops
