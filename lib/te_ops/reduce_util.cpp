// Reductions over any set of axes as TE computes, shared by the reduction, normalisation and
// loss operators.
#include "te_ops/reduce_util.h"

#include "core/str_cat.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {

using te::Expr;

namespace {

// Partial results kept per position of the innermost reduced axis modulo this many (a multiple of
// every vector width), so that a reduction over a contiguous axis runs on vectors.
constexpr int64_t kPartials = 16;


te::Tensor reduce_direct(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                         te::ReduceOp op,
                         const std::function<Expr(const std::vector<Expr>&)>& source,
                         const std::string& name) {
  std::vector<te::IterVar> axes;
  Shape out;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (reduced[k]) {
      axes.push_back(te::reduce_axis({0, shape[k]}, str_cat("r", k)));
      if (keepdims) out.push_back(1);
    } else {
      out.push_back(shape[k]);
    }
  }
  return te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx;
        size_t o = 0, r = 0;
        for (size_t k = 0; k < shape.size(); ++k) {
          if (reduced[k]) {
            idx.push_back(axes[r++]);
            if (keepdims) ++o;
          } else {
            idx.push_back(i[o++]);
          }
        }
        return te::reduce(op, source(idx), axes);
      },
      name);
}

}  // namespace

// A reduction over the axes k of `shape` with reduced[k] set; they are dropped from the result,
// or kept with size 1 when `keepdims`. `source` receives one index per axis of `shape`. When the
// innermost axis is reduced and long, its whole blocks of kPartials are reduced into kPartials
// partial results (positions congruent modulo kPartials, contiguous reads that vectorize), which
// are then combined, together with the elements of the last, partial block.
te::Tensor reduce_over(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                       te::ReduceOp op, const std::function<Expr(const std::vector<Expr>&)>& source,
                       const std::string& name) {
  return reduce_over(shape, reduced, keepdims, op, source, source, name);
}

te::Tensor reduce_over(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                       te::ReduceOp op, const std::function<Expr(const std::vector<Expr>&)>& source,
                       const std::function<Expr(const std::vector<Expr>&)>& tail_source,
                       const std::string& name) {
  const size_t rank = shape.size();
  if (rank == 0 || !reduced[rank - 1] || shape[rank - 1] < 4 * kPartials)
    return reduce_direct(shape, reduced, keepdims, op, source, name);
  const int64_t n = shape[rank - 1];
  const int64_t full = n / kPartials * kPartials;
  // partial(kept axes..., l) over the other reduced axes and the whole blocks.
  Shape blocked = shape;
  blocked[rank - 1] = n / kPartials;
  blocked.push_back(kPartials);
  std::vector<bool> blocked_reduced = reduced;
  blocked_reduced.push_back(false);
  te::Tensor partial = reduce_direct(
      blocked, blocked_reduced, false, op,
      [&](const std::vector<Expr>& idx) {
        std::vector<Expr> src(idx.begin(), idx.end() - 1);
        src[rank - 1] = idx[rank - 1] * kPartials + idx[rank];
        return source(src);
      },
      name + ".partial");
  te::IterVar l = te::reduce_axis({0, kPartials}, "l");
  Shape out;
  for (size_t k = 0; k < rank; ++k)
    if (!reduced[k] || keepdims) out.push_back(reduced[k] ? 1 : shape[k]);
  // The index of the kept axes from an output index.
  auto kept = [&](const std::vector<te::Var>& i) {
    std::vector<Expr> idx;
    size_t o = 0;
    for (size_t k = 0; k < rank; ++k) {
      if (!reduced[k]) idx.push_back(i[o]);
      if (!reduced[k] || keepdims) ++o;
    }
    return idx;
  };
  te::Tensor combined = te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = kept(i);
        idx.push_back(l);
        return te::reduce(op, partial(idx), {l});
      },
      full == n ? name : name + ".blocks");
  if (full == n) return combined;
  // The last, partial block (over the other reduced axes too).
  Shape rest = shape;
  rest[rank - 1] = n - full;
  te::Tensor tail = reduce_direct(
      rest, reduced, keepdims, op,
      [&](const std::vector<Expr>& idx) {
        std::vector<Expr> src = idx;
        src[rank - 1] = idx[rank - 1] + full;
        return tail_source(src);
      },
      name + ".tail");
  return te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        Expr a = combined(idx), b = tail(idx);
        return te::reduce_step(op, a, b);
      },
      name);
}

// Index `idx` of the full shape mapped into a keepdims statistic (reduced axes read 0).
te::Tensor squared_deviations(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                              const Expr& inv_n,
                              const std::function<Expr(const std::vector<Expr>&)>& source,
                              const std::string& name) {
  // The centre once per reader: the whole blocks of partial sums and the last, partial block of a
  // long innermost axis (not a multiple of the partials) each read their own, so that each has one
  // reader and can be computed at the output's row loop (a stage computed at a loop feeds one
  // stage); without a partial block the second is never read and never computed.
  auto squares_about = [&](const std::string& centre_name) {
    te::Tensor centre = reduce_over(shape, reduced, true, te::ReduceOp::sum, source, centre_name);
    return [=](const std::vector<Expr>& idx) {
      Expr d = source(idx) - centre(stat_index(idx, reduced)) * inv_n;
      return d * d;
    };
  };
  return reduce_over(shape, reduced, keepdims, te::ReduceOp::sum, squares_about(name + ".centre"),
                     squares_about(name + ".centre1"), name);
}

std::vector<Expr> stat_index(const std::vector<Expr>& idx, const std::vector<bool>& reduced) {
  std::vector<Expr> s;
  for (size_t k = 0; k < idx.size(); ++k) s.push_back(reduced[k] ? Expr(int64_t{0}) : idx[k]);
  return s;
}

std::vector<Expr> as_exprs(const std::vector<te::Var>& v) { return {v.begin(), v.end()}; }

Expr load_f32(const te::Tensor& t, const std::vector<Expr>& idx) {
  Expr v = t(idx);
  return is_float_like(t.dtype()) ? cast_to(DType::f32, v) : v;
}

Expr round16(DType t, const Expr& v) {
  return t == DType::f16 || t == DType::bf16 ? cast_to(v.dtype(), te::cast(t, v)) : v;
}

}  // namespace collage::te_ops
