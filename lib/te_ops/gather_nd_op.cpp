// TE compute of GatherND (ONNX 11-13; lib/ops defines it): each row of the last indices axis
// addresses a slice of data after the batch axes, which the output's trailing axes walk.
// Indices count from the end when negative and are clamped into range (the reference refuses
// out-of-range indices; generated code cannot report them).
#include "collage/ops/indexing.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;

absl::StatusOr<std::vector<te::Tensor>> gather_nd(const Graph& g, const Node& node,
                                                  std::span<const te::Tensor> in) {
  te::Tensor data = in[0], indices = in[1];
  const int64_t b = node.get<GatherNDAttrs>().batch_dims;
  const int64_t q = indices.ndim();
  if (q < 1 || b < 0 || b >= q || b >= data.ndim())
    return node_error(node, str_cat("batch_dims ", b, " does not fit data of rank ", data.ndim(),
                                    " and indices of rank ", q));
  const int64_t m = indices.shape()[q - 1];
  if (m < 1 || b + m > data.ndim())
    return node_error(node, str_cat("index rows of ", m, " do not fit data of rank ", data.ndim(),
                                    " after ", b, " batch axes"));
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        // Output axes: indices' outer q-1 axes (the first b the batch), then data's axes b+m...
        std::vector<Expr> row(i.begin(), i.begin() + (q - 1));
        std::vector<Expr> at(i.begin(), i.begin() + b);
        for (int64_t k = 0; k < m; ++k) {
          std::vector<Expr> ik = row;
          ik.push_back(Expr(k));
          Expr v = cast_to(DType::i64, indices(ik));
          const int64_t dim = data.shape()[b + k];
          at.push_back(clamp_index(te::select(v < int64_t{0}, v + dim, v), dim));
        }
        at.insert(at.end(), i.begin() + (q - 1), i.end());
        return data(at);
      },
      tensor_name(node))};
}

}  // namespace

void register_gather_nd_op(TeOpRegistry& r) {
  r.add("GatherND", {gather_nd, nullptr});
}

}  // namespace collage::te_ops
