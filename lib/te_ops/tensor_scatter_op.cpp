// TE compute of TensorScatter (ONNX 24; lib/ops/tensor_index.cpp defines it): each output element
// of the cache reads the update when its position along the axis lies in the batch's window
// [write index, write index + update length) (taken modulo the axis length in circular mode),
// else the cache. A linear window that passes the end of the axis, which the reference refuses,
// writes only the positions inside it; reads are clamped into range.
#include "collage/ops/indexing.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Outputs tensor_scatter(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<TensorScatterAttrs>();
  const te::Tensor cache = in[0], update = in[1];
  const te::Tensor starts = in.size() > 2 && in[2].defined() ? in[2] : te::Tensor();
  if (a.mode != "linear" && a.mode != "circular")
    return node_error(node, str_cat("mode '", a.mode, "' is not linear or circular"));
  auto axis = normalize_axis(node, a.axis, cache.ndim());
  if (!axis.ok()) return axis.status();
  const int64_t length = cache.shape()[*axis], len = update.shape()[*axis];
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        Expr start = starts.defined() ? cast_to(DType::i64, starts({idx[0]})) : Expr(int64_t{0});
        Expr rel = idx[*axis] - start;
        if (a.mode == "circular") rel = te::floormod(rel, Expr(length));
        Expr inside = te::logical_and(rel >= int64_t{0}, rel < Expr(len));
        std::vector<Expr> ui = idx;
        ui[*axis] = clamp_index(rel, len);
        return te::select(inside, update(ui), cache(idx));
      },
      tensor_name(node))};
}

}  // namespace

void register_tensor_scatter_op(TeOpRegistry& r) { r.add("TensorScatter", {tensor_scatter, nullptr}); }

}  // namespace collage::te_ops
