// Dense schedule template: row blocks of mb rows per parallel chunk, column panels of nr, and
// mr x nr register tiles accumulated over all of k (unrolled by ku), with the group's elementwise
// chain applied as each tile is stored. Matrix-vector products get a vectorized panel loop (A 1-D)
// or a plain parallel loop (B 1-D).
#include <algorithm>
#include <cmath>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "te_ops/conv_dense_common.h"
#include "te_ops/dense.h"

namespace collage::te_ops::dense {
namespace {

using tune::knob_or;
using tune::Knobs;

struct Parts {
  te::Tensor acc, bp, b;
  int64_t m = 1, n = 1, k = 1, nr = 16, batch = 1;
  bool a_vector = false, b_vector = false;
};

// Rows the tiles of mr rows in blocks of mb compute for m rows: a partial tile is computed
// whole (its rows clamped), so a tile that does not divide the rows wastes work.
int64_t rows_computed(int64_t m, int64_t mr, int64_t mb) {
  const int64_t block = std::max<int64_t>(mb / mr, 1) * mr;
  const int64_t rest = m % block;
  return m / block * block + (rest + mr - 1) / mr * mr;
}

std::string signature(const Node& node, const Graph& graph, bool b_const) {
  std::string s = node.op_name();
  const char* names[] = {"a", "b", "c"};
  for (size_t i = 0; i < node.inputs.size() && i < 3; ++i)
    if (node.inputs[i] != kNoValue) {
      const TensorType& t = graph.value(node.inputs[i]).type;
      s += str_cat("|", names[i], "=", detail::type_signature(t.dtype, t.shape));
    }
  if (node.op_name() == "Gemm") {
    const auto& a = node.get<GemmAttrs>();
    s += str_cat("|alpha=", a.alpha, "|beta=", a.beta, "|transA=", a.transA, "|transB=", a.transB);
  }
  return s + str_cat("|bconst=", b_const ? 1 : 0);
}

absl::StatusOr<ScheduledGroup> apply(const AnchorGroup& grp, const Parts& p, int lanes,
                                     const Knobs& kn) {
  std::vector<te::Tensor> prepacked;
  te::Schedule s = te::create_schedule(grp.outputs);
  std::vector<te::Tensor> producers;
  if (p.bp.defined()) producers.push_back(p.bp);
  detail::Epilogue e = detail::plan_epilogue(s, grp, p.acc, producers);
  const bool b_const = p.bp.defined() && detail::is_constant_input(grp, p.b);
  if (b_const) {
    s[p.bp].pack();
    prepacked.push_back(p.bp);
  }
  if (e.out.defined()) {
    te::Stage so = s[e.out];
    te::Stage sa = s[e.acc];
    const int rank = e.out.ndim();
    if (p.b_vector) {
      // One dot product per output element: parallel over the outermost loop.
      if (rank > 0) {
        so.parallel(so.axis(0));
        sa.compute_at(so, so.axis(rank - 1));
      }
    } else if (p.a_vector) {
      auto [jo, jt] = so.split(so.axis(rank - 1), p.nr);
      te::IterVar par = jo;
      for (int d = rank - 2; d >= 0; --d) par = so.fuse(so.axis(d), par);
      so.parallel(par);
      auto [jv, jl] = so.split(jt, lanes);
      so.vectorize(jl);
      sa.compute_at(so, par);
      auto [cjo, cji] = sa.split(sa.axis(rank - 1), lanes);
      sa.reorder({sa.reduce_axis(0), cjo, cji});
      sa.unroll(cjo).vectorize(cji);
      if (p.bp.defined() && !b_const) s[p.bp].compute_at(so, par);
    } else {
      // An output without rows (m = 0, an empty batch) is scheduled as one of one row: its
      // loops run no iteration.
      const int64_t rows = std::max<int64_t>(p.m, 1);
      const int64_t mr = std::clamp<int64_t>(knob_or(kn, "mr", 8), 1, rows);
      // A row block never exceeds the rows (rounded up to the tile): the tiles past the end
      // would be computed (clamped) for nothing.
      const int64_t mb = std::clamp<int64_t>(knob_or(kn, "mb", 64), mr, (rows + mr - 1) / mr * mr);
      const int64_t ku = std::max<int64_t>(knob_or(kn, "ku", 1), 1);
      // The rows: the output's axis before the columns, the axes before it the batch (the
      // reduction's too); or, when the reduction holds the batch's rows as one axis
      // (dense_compute.cpp), the output's leading axes fused into one. Leading unit axes stay
      // out of the fusion: their index would be dropped from the reduction's row index, which
      // then no longer folds back to the fused loop's (a tile's region would be every row).
      const bool flat = e.acc.ndim() == 2 && rank > 2;
      std::vector<te::IterVar> batch, acc_batch;
      int first_row = rank - 2;
      if (flat) {
        first_row = 0;
        while (first_row < rank - 2 && e.out.shape()[first_row] == 1) ++first_row;
      }
      te::IterVar row = so.axis(first_row);
      for (int d = first_row + 1; d + 1 < rank; ++d) row = so.fuse(row, so.axis(d));
      for (int d = 0; d < first_row; ++d) {
        batch.push_back(so.axis(d));
        if (!flat) acc_batch.push_back(sa.axis(d));
      }
      const int acc_rank = e.acc.ndim();
      auto [ib, irest] = so.split(row, (mb / mr) * mr);
      auto [jo, jt] = so.split(so.axis(rank - 1), p.nr);
      auto [im, it] = so.split(irest, mr);
      // Parallel over row blocks (fused with the batch), or over column panels when there are
      // few rows (a matrix-vector-like product).
      const bool par_j = knob_or(kn, "par_j", 0) != 0;
      std::vector<te::IterVar> order;
      if (par_j) order.push_back(jo);
      order.insert(order.end(), batch.begin(), batch.end());
      order.push_back(ib);
      if (!par_j) order.push_back(jo);
      order.insert(order.end(), {im, it, jt});
      so.reorder(order);
      te::IterVar par = ib;
      if (par_j) {
        par = jo;
      } else {
        for (auto d = batch.rbegin(); d != batch.rend(); ++d) par = so.fuse(*d, par);
      }
      so.parallel(par);
      auto [jto, jti] = so.split(jt, lanes);
      so.vectorize(jti);
      sa.compute_at(so, im);
      auto [cjo, cji] = sa.split(sa.axis(acc_rank - 1), lanes);
      auto [ko, ki] = sa.split(sa.reduce_axis(0), ku);
      std::vector<te::IterVar> aorder = acc_batch;
      aorder.insert(aorder.end(), {ko, ki, sa.axis(acc_rank - 2), cjo, cji});
      sa.reorder(aorder);
      if (ku > 1) sa.unroll(ki);
      sa.unroll(sa.axis(acc_rank - 2)).unroll(cjo).vectorize(cji);
      if (!b_const) s[p.bp].compute_at(so, jo);
    }
  }
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), std::move(prepacked)};
}

}  // namespace

absl::StatusOr<tune::ScheduleTemplate> schedule_template(const AnchorGroup& grp) {
  if (!grp.graph || grp.anchor < 0 || !grp.anchor_output.defined())
    return absl::InvalidArgumentError("dense schedule: incomplete anchor group");
  const Node& node = grp.graph->node(grp.anchor);
  Parts p;
  p.acc = grp.anchor_output->tag == "dense_view" ? te::input_tensors(grp.anchor_output)[0]
                                                 : grp.anchor_output;
  if (p.acc->tag != "dense")
    return absl::InvalidArgumentError(
        "dense schedule: the anchor output was not built by the TE dense compute");
  const Shape& a = grp.graph->value(node.inputs[0]).type.shape;
  const Shape& b = grp.graph->value(node.inputs[1]).type.shape;
  const bool gemm = node.op_name() == "Gemm";
  p.a_vector = !gemm && a.size() == 1;
  p.b_vector = !gemm && b.size() == 1;
  for (const te::Tensor& t : te::input_tensors(p.acc))
    if (t->tag == "dense_b_pack") {
      p.bp = t;
      p.b = te::input_tensors(t)[0];
      p.nr = t.shape().back();
    }
  const Shape& os = grp.anchor_output.shape();
  const GemmAttrs ga = gemm ? node.get<GemmAttrs>() : GemmAttrs();
  p.k = gemm ? (ga.transA ? a[0] : a[1]) : a.back();
  p.n = p.b_vector ? 1 : os.back();
  p.m = p.a_vector ? 1 : os[os.size() - (p.b_vector ? 1 : 2)];
  const int64_t outputs = shape_numel(os);
  // The reduction's rows: A's batch and rows as one when they are flattened (dense_compute.cpp).
  if (!p.a_vector && !p.b_vector && p.acc.ndim() == 2 && os.size() > 2) p.m = p.acc.shape()[0];
  p.batch = outputs / std::max<int64_t>(1, p.m * p.n);
  const int lanes = detail::f32_lanes(grp.target);

  tune::ScheduleTemplate t;
  t.signature = signature(node, *grp.graph, p.bp.defined() && detail::is_constant_input(grp, p.b)) +
                detail::target_signature(grp.target);
  t.flops = 2.0 * static_cast<double>(outputs) * static_cast<double>(p.k);
  if (!p.a_vector && !p.b_vector) {
    // The register tile: mr rows of nr / lanes vectors, at most the accumulators the target's
    // registers hold beside one vector of B per column vector and A's broadcast (AVX-512: 14 x 2
    // or 30 x 1 vectors; AVX2: 6 x 2 or 14 x 1). An output without rows (m = 0) gets one row.
    const int64_t vectors = std::max<int64_t>(p.nr / lanes, 1);
    const int64_t rows_max =
        std::max<int64_t>((grp.target.vector_registers() - vectors - 1) / vectors, 1);
    std::vector<int64_t> mr_values;
    for (int64_t v : {1, 2, 3, 4, 6, 8, 12, 14, 16, 24, 30})
      if (v <= rows_max) mr_values.push_back(v);
    std::vector<int64_t> mr = detail::at_most(mr_values, std::max<int64_t>(p.m, 1));
    std::vector<int64_t> mb = detail::at_most({8, 16, 32, 64, 128, 256}, std::max<int64_t>(p.m, 8));
    t.space.add("mr", mr);
    t.space.add("mb", mb);
    t.space.add("ku", {1, 2, 4});
    t.space.add("par_j", {0, 1});
    const int64_t want = 4 * std::max(grp.num_threads, 1);
    int64_t mbd = mb.front();
    for (int64_t v : mb)
      if (v <= 64 && p.batch * ((p.m + v - 1) / v) >= want) mbd = v;
    // Column panels outermost (par_j) when there are enough of them for the threads, or more
    // than row blocks: a panel of B stays in cache while every row of A passes, and a row block is
    // one tile. Measured on this Xeon (AVX-512 and the AVX2 target, one thread) over the GEMMs of
    // ResNet-50 and BERT-base and 1024^3: 0.91-1.06x oneDNN, against 0.58-0.93x with row blocks
    // outermost for the shapes of few rows and large k (bench/RESULTS.md).
    const int64_t row_chunks = p.batch * ((p.m + mbd - 1) / mbd);
    const int64_t panels = (p.n + p.nr - 1) / p.nr;
    const bool par_j = panels >= want || (row_chunks < want && panels > row_chunks);
    // The tile of least estimated work: the rows it computes (a partial tile computed whole)
    // times (mr + vectors) / mr, each k step loading `vectors` B vectors beside mr broadcasts for
    // mr x vectors FMAs (AVX2 at 128 rows: 6 rows, 132 computed, not 4; at 49 rows: 6, not 3).
    int64_t mrd = mr.front();
    double least = HUGE_VAL;
    for (auto it = mr.rbegin(); it != mr.rend(); ++it) {
      const double work =
          static_cast<double>(rows_computed(p.m, *it, par_j ? *it : std::max(mbd, *it))) *
          static_cast<double>(*it + vectors) / static_cast<double>(*it);
      if (work < least - 1e-9) least = work, mrd = *it;
    }
    // k unrolled by 4 (2) where it divides k: the loop's own overhead off the FMA ports.
    const int64_t kud = p.k % 4 == 0 ? 4 : p.k % 2 == 0 ? 2 : 1;
    t.defaults = {
        {"mr", mrd}, {"mb", par_j ? mrd : std::max(mbd, mrd)}, {"ku", kud}, {"par_j", par_j}};
  }
  t.apply = [grp, p, lanes](const Knobs& k) { return apply(grp, p, lanes, k); };
  return t;
}

}  // namespace collage::te_ops::dense
