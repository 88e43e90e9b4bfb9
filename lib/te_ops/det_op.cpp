// TE compute of Det (lib/ops/nn_norm_extra.cpp defines it by Gaussian elimination) for matrices
// up to 4 x 4: the Leibniz sum over the m! permutations, each product of f64 elements, cast to the
// output type once. Larger matrices are refused (the sum grows factorially; elimination needs
// pivoting, which a tensor expression does not have).
#include <algorithm>
#include <numeric>

#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

constexpr int64_t kMaxOrder = 4;

Outputs det(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const te::Tensor x = in[0];
  if (!is_float_like(x.dtype()) && x.dtype() != DType::f64)
    return node_error(node, "only float inputs are supported");
  if (x.ndim() < 2 || x.shape()[x.ndim() - 2] != x.shape().back())
    return node_error(node, "input must be [..., M, M]");
  const int64_t m = x.shape().back();
  if (m > kMaxOrder)
    return node_error(node, str_cat("matrices of order ", m, " are larger than the ", kMaxOrder,
                                    " x ", kMaxOrder, " the native Det expands"));
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        auto at = [&](int64_t r, int64_t c) {
          std::vector<Expr> idx = as_exprs(i);
          idx.push_back(Expr(r));
          idx.push_back(Expr(c));
          return cast_to(DType::f64, x(idx));
        };
        std::vector<int64_t> perm(static_cast<size_t>(m));
        std::iota(perm.begin(), perm.end(), int64_t{0});
        Expr total = te::make_const(DType::f64, m == 0 ? 1 : 0);
        if (m == 0) return cast_to(out.dtype, total);
        do {
          // The permutation's sign: the parity of its inversions.
          int64_t inversions = 0;
          for (int64_t a = 0; a < m; ++a)
            for (int64_t b = a + 1; b < m; ++b) inversions += perm[a] > perm[b];
          Expr term = at(0, perm[0]);
          for (int64_t r = 1; r < m; ++r) term = term * at(r, perm[r]);
          total = inversions % 2 ? total - term : total + term;
        } while (std::next_permutation(perm.begin(), perm.end()));
        return cast_to(out.dtype, total);
      },
      tensor_name(node))};
}

}  // namespace

void register_det_op(TeOpRegistry& r) { r.add("Det", {det, nullptr}); }

}  // namespace collage::te_ops
