// MaxPool's Indices (max_pool_indices.h): the window's maximum (a reduction of its own, so that
// each statistic has one reader), then the smallest tap ordinal holding it, then that tap's
// position in x. A window whose maximum matches no tap (NaN) reports its plane's first element.
#include "te_ops/max_pool_indices.h"

#include <cmath>
#include <functional>

#include "core/str_cat.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {

using te::Expr;

te::Tensor max_pool_indices(const te::Tensor& x, const ops::Window& w, int64_t storage_order,
                            const Shape& out, const std::string& name) {
  const int64_t rank = w.rank();
  int64_t taps_total = 1, plane = 1;
  for (int64_t k = 0; k < rank; ++k) taps_total *= w.kernel[k], plane *= w.in[k];
  // Tap k's position along each spatial axis of output element i; whether it lies inside x.
  auto position = [&](const std::vector<te::Var>& i, int64_t k, const Expr& tap) {
    return i[2 + k] * w.stride[k] - w.pad_begin[k] + tap * w.dilation[k];
  };
  auto reduce = [&](te::ReduceOp op, const std::string& n,
                    const std::function<Expr(const std::vector<te::Var>&, const std::vector<Expr>&,
                                             const Expr&, const Expr&)>& body) {
    std::vector<te::IterVar> taps;
    for (int64_t k = 0; k < rank; ++k)
      taps.push_back(te::reduce_axis({0, w.kernel[k]}, str_cat(n, "k", k)));
    return te::compute(
        out,
        [&](const std::vector<te::Var>& i) {
          std::vector<Expr> idx = {i[0], i[1]};
          Expr valid = true, ordinal = int64_t{0};
          for (int64_t k = 0; k < rank; ++k) {
            Expr pos = position(i, k, taps[k]);
            valid = te::logical_and(valid, te::logical_and(pos >= int64_t{0}, pos < w.in[k]));
            idx.push_back(clamp_index(pos, w.in[k]));
            ordinal = ordinal * w.kernel[k] + Expr(taps[k]);
          }
          Expr v = body(i, idx, valid, ordinal);
          return op == te::ReduceOp::max ? te::max(v, taps) : te::min(v, taps);
        },
        n);
  };
  const Expr lowest = te::make_const(
      x.dtype(), is_float(x.dtype()) ? -INFINITY : x.dtype() == DType::u8 ? 0.0 : -128.0);
  te::Tensor m = reduce(te::ReduceOp::max, name + ".max",
                        [&](const std::vector<te::Var>&, const std::vector<Expr>& idx,
                            const Expr& valid, const Expr&) {
                          return te::select(valid, x(idx), lowest);
                        });
  te::Tensor first = reduce(
      te::ReduceOp::min, name + ".first",
      [&](const std::vector<te::Var>& i, const std::vector<Expr>& idx, const Expr& valid,
          const Expr& ordinal) {
        return te::select(te::logical_and(valid, x(idx) == m(as_exprs(i))), ordinal,
                          Expr(taps_total));
      });
  // Strides of the spatial axes in the index reported.
  std::vector<int64_t> istride(static_cast<size_t>(rank), 1);
  for (int64_t k = rank - 2; k >= 0 && storage_order == 0; --k) istride[k] = istride[k + 1] * w.in[k + 1];
  for (int64_t k = 1; k < rank && storage_order == 1; ++k) istride[k] = istride[k - 1] * w.in[k - 1];
  return te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        Expr t = first(as_exprs(i));
        Expr base = (i[0] * Expr(out[1]) + i[1]) * Expr(plane);
        Expr at = base, rest = t;
        for (int64_t k = rank - 1; k >= 0; --k) {
          Expr tap = te::floormod(rest, Expr(w.kernel[k]));
          rest = te::floordiv(rest, Expr(w.kernel[k]));
          at = at + position(i, k, tap) * istride[k];
        }
        return te::select(t == Expr(taps_total), base, at);
      },
      name);
}

}  // namespace collage::te_ops
