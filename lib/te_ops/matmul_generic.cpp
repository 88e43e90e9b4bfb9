// MatMul on f64 (the dense compute's panels and schedule template are f32's; f16 and bf16 go
// there, widened): out[batch..., i, j] = sum_k A[..., i, k] * B[..., k, j] with numpy's 1-D
// operands and batch broadcasting, summed in f64; the default schedule runs it.
#include "core/str_cat.h"
#include "te_ops/dense.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops::dense {

absl::StatusOr<std::vector<te::Tensor>> generic_matmul(const Graph& g, const Node& node,
                                                       std::span<const te::Tensor> in) {
  const te::Tensor a = in[0], b = in[1];
  if (a.dtype() != DType::f64 || b.dtype() != DType::f64)
    return node_error(node, str_cat("inputs ", dtype_name(a.dtype()), " and ",
                                    dtype_name(b.dtype()), ": expected f64 for both"));
  if (a.ndim() == 0 || b.ndim() == 0) return node_error(node, "scalar operands are not allowed");
  const TensorType& out = output_type(g, node);
  const bool a_vector = a.ndim() == 1, b_vector = b.ndim() == 1;
  const int64_t k = a.shape().back(), rank = static_cast<int64_t>(out.shape.size());
  if ((b_vector ? b.shape()[0] : b.shape()[b.ndim() - 2]) != k)
    return node_error(node, "inner dimensions differ");
  te::IterVar r = te::reduce_axis({0, k}, "k");
  // The output's axes: batch..., then i unless A is a vector, then j unless B is one.
  const int64_t matrix_axes = (a_vector ? 0 : 1) + (b_vector ? 0 : 1);
  const int64_t batch_axes = rank - matrix_axes;
  auto batch_index = [&](const te::Tensor& t, const std::vector<te::Var>& i) {
    std::vector<te::Expr> idx;
    const int64_t own = t.ndim() - 2, off = batch_axes - own;
    for (int64_t d = 0; d < own; ++d)
      idx.push_back(t.shape()[d] == 1 ? te::Expr(int64_t{0}) : te::Expr(i[off + d]));
    return idx;
  };
  te::Tensor sum = te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<te::Expr> ai, bi;
        if (a_vector) {
          ai = {te::Expr(r)};
        } else {
          ai = batch_index(a, i);
          ai.push_back(i[batch_axes]);
          ai.push_back(r);
        }
        if (b_vector) {
          bi = {te::Expr(r)};
        } else {
          bi = batch_index(b, i);
          bi.push_back(r);
          bi.push_back(i[rank - 1]);
        }
        return te::sum(a(ai) * b(bi), {r});
      },
      tensor_name(node));
  return std::vector<te::Tensor>{sum};
}

}  // namespace collage::te_ops::dense
