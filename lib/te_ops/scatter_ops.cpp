// TE computes of ScatterElements and ScatterND (lib/ops/tensor_index.cpp defines them): each
// output element scans the update positions that could land on it. With reduction "none" the
// last matching update wins (found as the largest matching position, then read), as the
// reference writes updates in order; "add", "mul", "max" and "min" combine every match with the
// data. Out-of-range indices match nothing (the reference refuses them); reads are clamped into
// range.
#include <functional>

#include "collage/ops/indexing.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

// An index read from an index tensor, negative counting from the end (not clamped).
Expr wrapped(const Expr& raw, int64_t dim) {
  Expr v = cast_to(DType::i64, raw);
  return te::select(v < int64_t{0}, v + dim, v);
}

// How one output element combines the updates: `match(r)` says whether position r of the
// scanned range [0, rows) lands on it, `update(r)` reads that update.
struct Scan {
  int64_t rows = 0;
  std::function<Expr(const Expr& r)> match;
  std::function<Expr(const Expr& r)> update;
};

// The output: `scan(j)` describes output element j's candidates.
Outputs scatter(const Graph& g, const Node& node, const te::Tensor& data,
                const std::function<Scan(const std::vector<Expr>& j)>& scan) {
  const std::string& reduction = node.get<ScatterAttrs>().reduction;
  const TensorType& out = output_type(g, node);
  if (reduction != "none" && out.dtype == DType::boolean)
    return node_error(node, str_cat("reduction '", reduction, "' on bool data"));
  const std::string name = tensor_name(node);
  const int64_t rows = scan(std::vector<Expr>(out.shape.size(), Expr(int64_t{0}))).rows;
  if (rows < 1)  // nothing scattered: a copy
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) { return data(std::vector<Expr>(i.begin(), i.end())); },
        name)};
  auto as_exprs = [](const std::vector<te::Var>& i) {
    return std::vector<Expr>(i.begin(), i.end());
  };
  if (reduction == "none") {
    te::Tensor last = te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          Scan s = scan(as_exprs(i));
          te::IterVar r = te::reduce_axis({0, s.rows}, "r");
          Expr at = r;
          return te::max(te::select(s.match(at), at, Expr(int64_t{-1})), {r});
        },
        name + ".last");
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          std::vector<Expr> j = as_exprs(i);
          Expr k = last(j);
          return te::select(k >= int64_t{0},
                            cast_to(out.dtype, scan(j).update(te::maximum(k, int64_t{0}))),
                            data(j));
        },
        name)};
  }
  const te::ReduceOp op = reduction == "add"   ? te::ReduceOp::sum
                          : reduction == "mul" ? te::ReduceOp::prod
                          : reduction == "max" ? te::ReduceOp::max
                                               : te::ReduceOp::min;
  te::Tensor acc = te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Scan s = scan(as_exprs(i));
        te::IterVar r = te::reduce_axis({0, s.rows}, "r");
        Expr u = s.update(r);
        if (is_float_like(u.dtype())) u = cast_to(DType::f32, u);
        Expr none = te::reduce_identity(op, u.dtype());
        Expr v = te::select(s.match(r), u, none);
        return te::reduce(op, v, {r});
      },
      name + ".acc");
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> j = as_exprs(i);
        Expr d = data(j);
        if (is_float_like(d.dtype())) d = cast_to(DType::f32, d);
        Expr a = acc(j);
        return cast_to(out.dtype, te::reduce_step(op, d, a));
      },
      name)};
}

Outputs scatter_elements(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor data = in[0], indices = in[1], updates = in[2];
  auto axis = normalize_axis(node, node.get<ScatterAttrs>().axis, data.ndim());
  if (!axis.ok()) return axis.status();
  const Shape& is = indices.shape();
  const int64_t dim = data.shape()[*axis];
  return scatter(g, node, data, [&](const std::vector<Expr>& j) {
    // Update position (j with j[axis] replaced by r) exists when j fits indices' shape.
    Expr inside = Expr(true);
    std::vector<Expr> at(j.size());
    for (size_t d = 0; d < j.size(); ++d) {
      if (static_cast<int64_t>(d) == *axis) continue;
      inside = inside && j[d] < is[d];
      at[d] = clamp_index(j[d], is[d]);
    }
    auto position = [at, axis = *axis](const Expr& r) {
      std::vector<Expr> p = at;
      p[axis] = r;
      return p;
    };
    return Scan{
        is[*axis],
        [=](const Expr& r) { return inside && wrapped(indices(position(r)), dim) == j[*axis]; },
        [=](const Expr& r) { return updates(position(r)); }};
  });
}

Outputs scatter_nd(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor data = in[0], indices = in[1], updates = in[2];
  const Shape& is = indices.shape();
  const int64_t m = is.back();
  const Shape outer(is.begin(), is.end() - 1);
  int64_t rows = 1;
  for (int64_t d : outer) rows *= d;
  const Shape dims = data.shape();
  return scatter(g, node, data, [&](const std::vector<Expr>& j) {
    auto match = [=](const Expr& r) {
      std::vector<Expr> k = unravel(r, outer);
      Expr all = Expr(true);
      for (int64_t c = 0; c < m; ++c) {
        std::vector<Expr> ik = k;
        ik.push_back(Expr(c));
        all = all && wrapped(indices(ik), dims[c]) == j[c];
      }
      return all;
    };
    auto update = [=](const Expr& r) {
      std::vector<Expr> u = unravel(r, outer);
      u.insert(u.end(), j.begin() + m, j.end());
      return updates(u);
    };
    return Scan{rows, match, update};
  });
}

}  // namespace

void register_scatter_ops(TeOpRegistry& r) {
  r.add("ScatterElements", {scatter_elements, nullptr});
  r.add("ScatterND", {scatter_nd, nullptr});
}

}  // namespace collage::te_ops
