// TE computes of the reductions and of the operators built on them: ReduceSum/Mean/Max, ArgMax,
// Softmax, LogSoftmax, LayerNormalization and InstanceNormalization. Statistics accumulate in f32.
#include <functional>

#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/ops/trees.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

// Partial results kept per position of the innermost reduced axis modulo this many (a multiple of
// every vector width), so that a reduction over a contiguous axis runs on vectors.
constexpr int64_t kPartials = 16;

Expr combine(te::ReduceOp op, const Expr& src, const std::vector<te::IterVar>& axes) {
  switch (op) {
    case te::ReduceOp::sum:
      return te::sum(src, axes);
    case te::ReduceOp::max:
      return te::max(src, axes);
    case te::ReduceOp::min:
      break;
  }
  return te::min(src, axes);
}

te::Tensor reduce_direct(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                         te::ReduceOp op,
                         const std::function<Expr(const std::vector<Expr>&)>& source,
                         const std::string& name);

// A reduction over the axes k of `shape` with reduced[k] set; they are dropped from the result,
// or kept with size 1 when `keepdims`. `source` receives one index per axis of `shape`. When the
// innermost axis is reduced and long, its whole blocks of kPartials are reduced into kPartials
// partial results (positions congruent modulo kPartials, contiguous reads that vectorize), which
// are then combined, together with the elements of the last, partial block.
te::Tensor reduce_over(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                       te::ReduceOp op, const std::function<Expr(const std::vector<Expr>&)>& source,
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
        return combine(op, partial(idx), {l});
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
        return source(src);
      },
      name + ".tail");
  return te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        Expr a = combined(idx), b = tail(idx);
        return op == te::ReduceOp::sum ? a + b
               : op == te::ReduceOp::max ? te::maximum(a, b)
                                         : te::minimum(a, b);
      },
      name);
}

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
        return combine(op, source(idx), axes);
      },
      name);
}

// Index `idx` of the full shape mapped into a keepdims statistic (reduced axes read 0).
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

// ReduceSum, ReduceMean, ReduceMax.
TeOpDef reduce_op(te::ReduceOp op, bool mean) {
  return {[op, mean](const Graph& g, const Node& node, std::span<const te::Tensor> in) -> Outputs {
    const auto& a = node.get<ReduceAttrs>();
    te::Tensor x = in[0];
    const TensorType& out = output_type(g, node);
    if (x.dtype() == DType::boolean) return node_error(node, "bool inputs are not supported");
    const int64_t rank = x.ndim();
    std::vector<bool> reduced(rank, a.axes.empty() && !a.noop_with_empty_axes);
    for (int64_t axis : a.axes) {
      auto k = normalize_axis(node, axis, rank);
      if (!k.ok()) return k.status();
      reduced[*k] = true;
    }
    const std::string name = tensor_name(node);
    if (std::none_of(reduced.begin(), reduced.end(), [](bool b) { return b; }))
      return std::vector<te::Tensor>{te::compute(
          out.shape, [&](const std::vector<te::Var>& i) { return x(as_exprs(i)); }, name)};
    te::Tensor acc = reduce_over(
        x.shape(), reduced, a.keepdims != 0, op,
        [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, name + ".acc");
    int64_t count = 1;
    for (int64_t k = 0; k < rank; ++k)
      if (reduced[k]) count *= x.shape()[k];
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          Expr v = acc(as_exprs(i));
          if (mean) v = is_float_like(v.dtype()) ? v / te::make_const(v.dtype(), count)
                                                 : te::div(v, te::make_const(v.dtype(), count));
          return cast_to(out.dtype, v);
        },
        name)};
  }, nullptr};
}

Outputs argmax(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<ArgMaxAttrs>();
  te::Tensor x = in[0];
  if (x.dtype() == DType::boolean) return node_error(node, "bool inputs are not supported");
  auto axis = normalize_axis(node, a.axis, x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<bool> reduced(x.ndim(), false);
  reduced[*axis] = true;
  const int64_t n = x.shape()[*axis];
  const std::string name = tensor_name(node);
  te::Tensor m = reduce_over(
      x.shape(), reduced, true, te::ReduceOp::max,
      [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, name + ".max");
  // The first (or last) position holding the maximum.
  const bool last = a.select_last_index != 0;
  te::Tensor pos = reduce_over(
      x.shape(), reduced, a.keepdims != 0, last ? te::ReduceOp::max : te::ReduceOp::min,
      [&](const std::vector<Expr>& idx) {
        return te::select(load_f32(x, idx) == m(stat_index(idx, reduced)), idx[*axis],
                          Expr(last ? int64_t{-1} : n));
      },
      name + ".pos");
  return std::vector<te::Tensor>{te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) {
        // A row whose maximum is NaN matches nowhere: NaN is picked only as the first element.
        Expr p = pos(as_exprs(i));
        return te::select(p == Expr(last ? int64_t{-1} : n), Expr(last ? n - 1 : int64_t{0}), p);
      },
      name)};
}

TeOpDef softmax_op(bool log) {
  return {[log](const Graph& g, const Node& node, std::span<const te::Tensor> in) -> Outputs {
    te::Tensor x = in[0];
    if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
    auto axis = normalize_axis(node, node.get<SoftmaxAttrs>().axis, x.ndim());
    if (!axis.ok()) return axis.status();
    std::vector<bool> reduced(x.ndim(), false);
    reduced[*axis] = true;
    const std::string name = tensor_name(node);
    // The maximum twice, so that each statistic has one reader and can be computed at the
    // output's row loop (a stage computed at a loop may feed only one stage).
    auto row_max = [&](const std::string& n) {
      return reduce_over(
          x.shape(), reduced, true, te::ReduceOp::max,
          [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, n);
    };
    te::Tensor m_sum = row_max(name + ".max0");
    te::Tensor m = row_max(name + ".max");
    te::Tensor s = reduce_over(
        x.shape(), reduced, true, te::ReduceOp::sum,
        [&](const std::vector<Expr>& idx) {
          return te::exp(load_f32(x, idx) - m_sum(stat_index(idx, reduced)));
        },
        name + ".sum");
    const TensorType& out = output_type(g, node);
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          std::vector<Expr> idx = as_exprs(i);
          std::vector<Expr> si = stat_index(idx, reduced);
          Expr d = load_f32(x, idx) - m(si);
          return cast_to(out.dtype, log ? d - te::log(s(si)) : te::exp(d) / s(si));
        },
        name)};
  }, nullptr};
}

// (x - mean) / sqrt(var + eps) * scale + bias over the axes with reduced[k] set, with two-pass
// statistics; scale(idx) and bias(idx) give the affine terms of element idx.
te::Tensor normalize(const te::Tensor& x, const std::vector<bool>& reduced, double epsilon,
                     const std::function<Expr(const std::vector<Expr>&)>& scale,
                     const std::function<Expr(const std::vector<Expr>&)>& bias, DType out_dtype,
                     const std::string& name) {
  int64_t count = 1;
  for (size_t k = 0; k < reduced.size(); ++k)
    if (reduced[k]) count *= x.shape()[k];
  const Expr inv_n = te::make_const(DType::f32, 1.0 / static_cast<double>(count));
  // The sum twice (for the variance and for the output), so that each statistic has one reader.
  auto total = [&](const std::string& n) {
    return reduce_over(
        x.shape(), reduced, true, te::ReduceOp::sum,
        [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, n);
  };
  te::Tensor sum_sq = total(name + ".sum0");
  te::Tensor sum = total(name + ".sum");
  te::Tensor sq = reduce_over(
      x.shape(), reduced, true, te::ReduceOp::sum,
      [&](const std::vector<Expr>& idx) {
        Expr d = load_f32(x, idx) - sum_sq(stat_index(idx, reduced)) * inv_n;
        return d * d;
      },
      name + ".sq");
  return te::compute(
      x.shape(),
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        std::vector<Expr> si = stat_index(idx, reduced);
        Expr y = (load_f32(x, idx) - sum(si) * inv_n) *
                 te::rsqrt(sq(si) * inv_n + te::make_const(DType::f32, epsilon));
        return cast_to(out_dtype, y * scale(idx) + bias(idx));
      },
      name);
}

Outputs layer_norm(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<LayerNormalizationAttrs>();
  te::Tensor x = in[0], scale = in[1];
  te::Tensor bias = in.size() > 2 ? in[2] : te::Tensor();
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  auto axis = normalize_axis(node, a.axis, x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<bool> reduced(x.ndim(), false);
  for (int64_t k = *axis; k < x.ndim(); ++k) reduced[k] = true;
  // Scale and B broadcast onto the normalised axes (aligned at the end).
  auto affine = [](const te::Tensor& t, const std::vector<Expr>& idx) -> Expr {
    if (!t.defined()) return te::make_const(DType::f32, 0);
    std::vector<Expr> ti;
    const size_t lead = idx.size() - t.shape().size();
    for (size_t k = 0; k < t.shape().size(); ++k)
      ti.push_back(t.shape()[k] == 1 ? Expr(int64_t{0}) : idx[lead + k]);
    return load_f32(t, ti);
  };
  return std::vector<te::Tensor>{normalize(
      x, reduced, a.epsilon, [&](const std::vector<Expr>& i) { return affine(scale, i); },
      [&](const std::vector<Expr>& i) { return affine(bias, i); }, output_type(g, node).dtype,
      tensor_name(node))};
}

Outputs instance_norm(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0], scale = in[1], bias = in[2];
  if (x.ndim() < 3) return node_error(node, "input rank must be at least 3");
  std::vector<bool> reduced(x.ndim(), true);
  reduced[0] = reduced[1] = false;
  return std::vector<te::Tensor>{normalize(
      x, reduced, node.get<InstanceNormalizationAttrs>().epsilon,
      [&](const std::vector<Expr>& i) { return load_f32(scale, {i[1]}); },
      [&](const std::vector<Expr>& i) { return load_f32(bias, {i[1]}); },
      output_type(g, node).dtype, tensor_name(node))};
}

}  // namespace

void register_reduction_ops(TeOpRegistry& r) {
  r.add("ReduceSum", reduce_op(te::ReduceOp::sum, false));
  r.add("ReduceMean", reduce_op(te::ReduceOp::sum, true));
  r.add("ReduceMax", reduce_op(te::ReduceOp::max, false));
  r.add("ArgMax", {argmax, nullptr});
  r.add("Softmax", softmax_op(false));
  r.add("LogSoftmax", softmax_op(true));
  r.add("LayerNormalization", {layer_norm, nullptr});
  r.add("InstanceNormalization", {instance_norm, nullptr});
}

}  // namespace collage::te_ops
