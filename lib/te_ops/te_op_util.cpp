// Helpers shared by the TE operator definitions.
#include "te_ops/te_op_util.h"

#include <algorithm>

#include "core/str_cat.h"

namespace collage::te_ops {

absl::Status node_error(const Node& node, std::string_view message) {
  return absl::InvalidArgumentError(str_cat(node.op_name(), " '", node.name, "': ", message));
}

const TensorType& output_type(const Graph& g, const Node& node, int i) {
  return g.value(node.outputs[i]).type;
}

std::vector<te::Expr> broadcast_index(const te::Tensor& t, std::span<const te::Var> out) {
  const Shape& s = t.shape();
  const size_t lead = out.size() - s.size();
  std::vector<te::Expr> idx;
  for (size_t k = 0; k < s.size(); ++k)
    idx.push_back(s[k] == 1 ? te::Expr(int64_t{0}) : te::Expr(out[lead + k]));
  return idx;
}

absl::StatusOr<int64_t> normalize_axis(const Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return node_error(node, str_cat("axis ", axis, " is out of range for rank ", rank));
  return axis < 0 ? axis + rank : axis;
}

te::Expr cast_to(DType t, const te::Expr& v) { return v.dtype() == t ? v : te::cast(t, v); }

std::vector<te::Expr> unravel(const te::Expr& flat, const Shape& shape) {
  std::vector<te::Expr> idx(shape.size());
  te::Expr rest = flat;
  for (size_t k = shape.size(); k-- > 0;) {
    if (k == 0) {
      idx[k] = rest;
    } else {
      idx[k] = shape[k] == 1 ? te::Expr(int64_t{0}) : te::floormod(rest, shape[k]);
      rest = shape[k] == 1 ? rest : te::floordiv(rest, shape[k]);
    }
  }
  if (!shape.empty() && shape[0] == 1) idx[0] = te::Expr(int64_t{0});
  return idx;
}

te::Expr ravel(std::span<const te::Expr> index, const Shape& shape) {
  te::Expr flat = int64_t{0};
  for (size_t k = 0; k < shape.size(); ++k) flat = flat * shape[k] + index[k];
  return flat;
}

te::Expr ravel(std::span<const te::Var> index, const Shape& shape) {
  std::vector<te::Expr> e(index.begin(), index.end());
  return ravel(std::span<const te::Expr>(e), shape);
}

te::Expr clamp_index(const te::Expr& i, int64_t extent) {
  return te::minimum(te::maximum(i, int64_t{0}), extent - 1);
}

std::string tensor_name(const Node& node, int i) {
  return i == 0 ? node.name : str_cat(node.name, ".", i);
}

absl::Status require_dtypes(const Graph& g, const Node& node,
                            std::initializer_list<DType> allowed) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const DType t = g.value(node.inputs[i]).type.dtype;
    if (std::find(allowed.begin(), allowed.end(), t) == allowed.end())
      return node_error(node, str_cat("input ", i, " has dtype ", dtype_name(t),
                                      ", which the native backend does not support here"));
  }
  return absl::OkStatus();
}

}  // namespace collage::te_ops
