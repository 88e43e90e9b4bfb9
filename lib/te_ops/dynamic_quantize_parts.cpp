// TE computes and schedules of DynamicQuantizeRange and DynamicQuantizeParams
// (include/collage/ops/dynamic_quantize_parts.h): the range as a parallel loop over its chunks,
// each reading its part of x once, in order, a vector at a time; the scale and zero point as one
// short vectorized reduction over the chunks' partial results.
#include <algorithm>

#include "collage/ops/dynamic_quantize_parts.h"
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/dynamic_quantize_parts.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Expr f32(double v) { return te::make_const(DType::f32, v); }

Outputs range(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const te::Tensor x = in[0];
  if (x.dtype() != DType::f32) return node_error(node, "only f32 inputs are supported");
  const auto& a = node.get<DynamicQuantizeRangeAttrs>();
  const Shape& shape = x.shape();
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t per_chunk = shape[axis - 1] / a.chunks;
  const Shape trailing(shape.begin() + static_cast<std::ptrdiff_t>(axis), shape.end());
  std::vector<te::IterVar> reduced;
  for (size_t k = 0; k + 1 < axis; ++k) reduced.push_back(te::reduce_axis({0, shape[k]}, str_cat("r", k)));
  reduced.push_back(te::reduce_axis({0, per_chunk}, "rc"));
  return std::vector<te::Tensor>{te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx(reduced.begin(), reduced.end() - 1);
        idx.push_back(i[1] * Expr(per_chunk) + reduced.back());
        for (const Expr& t : unravel(i[2], trailing)) idx.push_back(t);
        const Expr v = x(idx);
        return te::reduce(te::ReduceOp::max, te::select(i[0] == Expr(int64_t{0}), f32(0) - v, v),
                          reduced);
      },
      tensor_name(node))};
}

// How many running maxima the scale's reduction keeps per sign (the largest of 64, 32, ..., 1
// that divides the row length n): position t of a row goes to maximum t mod w, which the
// schedule keeps in vectors; those w are then reduced one by one.
int64_t combined_width(int64_t n) {
  for (int64_t w : {64, 32, 16, 8, 4, 2})
    if (n % w == 0) return w;
  return 1;
}

Outputs params(const Graph&, const Node& node, std::span<const te::Tensor> in) {
  const te::Tensor r = in[0];
  const int64_t chunks = r.shape()[1], n = r.shape()[2], w = combined_width(n);
  const std::string name = tensor_name(node);
  te::IterVar c = te::reduce_axis({0, chunks}, "c"), o = te::reduce_axis({0, n / w}, "o");
  te::Tensor part = te::compute(
      {2, w},
      [&](const std::vector<te::Var>& i) {
        return te::reduce(te::ReduceOp::max, r({Expr(i[0]), Expr(c), o * Expr(w) + i[1]}), {c, o});
      },
      name + ".part");
  te::IterVar l = te::reduce_axis({0, w}, "l");
  te::Tensor extreme = te::compute(
      {2},
      [&](const std::vector<te::Var>& i) {
        return te::reduce(te::ReduceOp::max, part({Expr(i[0]), Expr(l)}), {l});
      },
      name + ".extreme");
  // As DynamicQuantizeLinear's compute (quantize_ops.cpp): the range widened to hold 0.
  auto lo = [&] { return te::minimum(f32(0) - extreme({Expr(int64_t{0})}), f32(0)); };
  te::Tensor scale = te::compute(
      {},
      [&](const std::vector<te::Var>&) {
        Expr hi = te::maximum(extreme({Expr(int64_t{1})}), f32(0));
        return te::select(hi == lo(), f32(1), hi - lo()) / f32(255);
      },
      tensor_name(node, 0));
  te::Tensor zp = te::compute(
      {},
      [&](const std::vector<te::Var>&) {
        Expr z = te::round(te::minimum(te::maximum(f32(0) - lo() / scale({}), f32(0)), f32(255)));
        return cast_to(DType::u8, z);
      },
      tensor_name(node, 1));
  return std::vector<te::Tensor>{scale, zp};
}

// The range: chunks in parallel; in each, the reduced axes outside, then the trailing values a
// vector at a time, both signs of each, so that x is read once, in order, into partial results
// that stay in cache.
absl::StatusOr<ScheduledGroup> schedule_range(const AnchorGroup& group) {
  ScheduledGroup out{te::create_schedule(group.outputs), {}};
  const te::Tensor t = group.anchor_output;
  te::Stage stage = out.schedule[t];
  const int64_t lanes = std::max(1, group.target.vector_bytes() / 4);
  std::vector<te::IterVar> order{t.axis(1)};
  for (size_t r = 0; r < t->reduce_axis.size(); ++r) order.push_back(t.reduce_axis(static_cast<int>(r)));
  if (t.shape()[2] >= lanes) {
    // The sign inside the vector loop: one load of x feeds both maxima.
    auto [to, ti] = stage.split(t.axis(2), lanes);
    order.insert(order.end(), {to, t.axis(0), ti});
    stage.reorder(order);
    stage.vectorize(ti);
  } else {
    order.insert(order.end(), {t.axis(0), t.axis(2)});
    stage.reorder(order);
  }
  stage.unroll(t.axis(0));
  stage.parallel(t.axis(1));
  return out;
}

// The scale and zero point: the chunks' partial results reduced a few vectors at a time (several
// accumulators), the rest scalar loops of one value each.
absl::StatusOr<ScheduledGroup> schedule_params(const AnchorGroup& group) {
  ScheduledGroup out{te::create_schedule(group.outputs), {}};
  const int64_t lanes = std::max(1, group.target.vector_bytes() / 4);
  for (const te::Tensor& t : out.schedule.stage_tensors()) {
    if (t.op_kind() != te::OpKind::compute || t.ndim() != 2) continue;
    te::Stage stage = out.schedule[t];
    std::vector<te::IterVar> order{t.axis(0), t.reduce_axis(0), t.reduce_axis(1)};
    if (t.shape()[1] >= lanes) {
      auto [vo, vi] = stage.split(t.axis(1), lanes);
      order.push_back(vo);
      order.push_back(vi);
      stage.reorder(order);
      stage.unroll(vo);
      stage.vectorize(vi);
    } else {
      order.push_back(t.axis(1));
      stage.reorder(order);
    }
  }
  return out;
}

}  // namespace

void register_dynamic_quantize_parts(TeOpRegistry& r) {
  r.add("DynamicQuantizeRange", {range, schedule_range});
  r.add("DynamicQuantizeParams", {params, schedule_params});
}

}  // namespace collage::te_ops
