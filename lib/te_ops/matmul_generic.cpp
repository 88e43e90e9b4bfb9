// MatMul on element types other than f32 (the dense compute's panels and schedule template are
// f32's): out[batch..., i, j] = sum_k A[..., i, k] * B[..., k, j] with numpy's 1-D operands and
// batch broadcasting, 16-bit floats accumulated in f32 and rounded once, f64 in f64. The default
// schedule runs it.
#include "core/str_cat.h"
#include "te_ops/dense.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops::dense {

absl::StatusOr<std::vector<te::Tensor>> generic_matmul(const Graph& g, const Node& node,
                                                       std::span<const te::Tensor> in) {
  const te::Tensor a = in[0], b = in[1];
  if (a.dtype() != b.dtype() || a.dtype() == DType::boolean)
    return node_error(node, str_cat("inputs ", dtype_name(a.dtype()), " and ",
                                    dtype_name(b.dtype()), " are not supported"));
  if (a.ndim() == 0 || b.ndim() == 0) return node_error(node, "scalar operands are not allowed");
  const TensorType& out = output_type(g, node);
  const DType acc = is_float_like(a.dtype()) ? DType::f32 : a.dtype();
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
        te::Expr prod = cast_to(acc, a(ai)) * cast_to(acc, b(bi));
        return te::sum(prod, {r});
      },
      acc == out.dtype ? tensor_name(node) : tensor_name(node) + ".sum");
  if (acc == out.dtype) return std::vector<te::Tensor>{sum};
  // A reduction must be the outermost expression of its compute: the rounding is a stage of its own.
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        return cast_to(out.dtype, sum(std::vector<te::Expr>(i.begin(), i.end())));
      },
      tensor_name(node))};
}

}  // namespace collage::te_ops::dense
