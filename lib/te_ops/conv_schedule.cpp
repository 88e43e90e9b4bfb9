// Convolution schedules: the blocked NCHWc template (register tiles of ow_t x oc_t vectors of 16
// output channels, data packed per parallel chunk, weight pre-packed), the blocked depthwise one
// (ow_t vectors of 16 channels, one weight vector per tap) and the direct NCHW template (vectors
// along the output row), each with the group's elementwise chain fused into the store; the blocked
// ones also read and write values kept in 16-channel blocks between groups (layout_views.h).
// Pointwise convolutions reading blocks run over their positions as one axis (conv.h: runs_flat).
#include <algorithm>
#include <tuple>

#include "core/str_cat.h"
#include "te_ops/conv.h"
#include "te_ops/conv_dense_common.h"
#include "te_ops/conv_tile.h"
#include "te_ops/layout_views.h"

namespace collage::te_ops::conv {
namespace {

using tune::Knobs;
using tune::knob_or;

// The stages of a conv group built by compute().
struct Parts {
  te::Tensor acc;   // the reduction (conv_nchwc, conv_dw or conv_direct)
  te::Tensor data;  // packed or padded data
  te::Tensor wpk;   // packed weight (blocked only)
  te::Tensor w;     // weight placeholder
  bool flat = false;  // the blocked compute runs over flattened positions (runs_flat)
};

absl::StatusOr<Parts> find_parts(const AnchorGroup& grp) {
  Parts p;
  const std::string tag = grp.anchor_output->tag;
  p.acc = (tag == "conv_unpack" || tag == "conv_view") ? te::input_tensors(grp.anchor_output)[0]
                                                        : grp.anchor_output;
  if (p.acc->tag != "conv_nchwc" && p.acc->tag != "conv_dw" && p.acc->tag != "conv_direct")
    return absl::InvalidArgumentError(str_cat("conv schedule: anchor output '",
                                              grp.anchor_output.name(),
                                              "' was not built by the TE conv compute"));
  for (const te::Tensor& t : te::input_tensors(p.acc)) {
    if (t->tag == "conv_data_pack" || t->tag == "conv_pad") p.data = t;
    if (t->tag == "conv_weight_pack") {
      p.wpk = t;
      p.w = te::input_tensors(t)[0];
    }
  }
  if (p.acc->tag == "conv_direct") {
    std::vector<te::Tensor> in = te::input_tensors(p.acc);
    for (const te::Tensor& t : in)
      if (t.op_kind() == te::OpKind::placeholder && t.ndim() >= 3) p.w = t;
  }
  return p;
}

// Grouped convolutions name their template (their knobs differ from the direct template's that
// ran them before the blocked ones existed); dense ones keep the signatures of earlier tuning logs.
std::string signature(const Geometry& g, const te::Tensor& w, bool w_const, const std::string& tag,
                      bool flat) {
  return str_cat(g.group > 1 ? str_cat(tag, "|") : std::string(), "Conv|x=f32[", g.n, ",", g.c,
                 g.spatial == 2 ? str_cat(",", g.h) : "", ",", g.w,
                 "]|w=", detail::type_signature(w), "|bias=", g.bias ? 1 : 0, "|group=", g.group,
                 "|strides=", g.sh, ",", g.sw, "|dilations=", g.dh, ",", g.dw, "|pads=", g.pt, ",",
                 g.pl, "|out=", g.oh, ",", g.ow, "|wconst=", w_const ? 1 : 0,
                 g.block != kBlock ? str_cat("|block=", g.block) : std::string(),
                 flat ? "|flat" : "");
}

// `values` and `v`.
std::vector<int64_t> with(std::vector<int64_t> values, int64_t v) {
  values.push_back(v);
  return values;
}

// The smallest divisor of `tiles` of at least `want` parts (all of them when there are fewer),
// or `want` when every such divisor exceeds 4 * want (a large prime count of tiles).
int64_t dividing_chunks(int64_t tiles, int64_t want) {
  if (tiles <= want) return tiles;
  for (int64_t d = want; d <= 4 * want; ++d)
    if (tiles % d == 0) return d;
  return want;
}

// The knobs of a compute that runs_flat: ow_t positions x oc_t channel blocks per register tile
// (any width: only the last tile of all oh * ow positions has a tail), p_chunks parallel chunks of
// tiles, or oc_outer chunks of channel tiles when par_oc. The default parallel axis re-reads the
// smaller operand: each chunk of positions reads every weight, each chunk of channels the whole
// input.
void flat_space(const Geometry& g, int threads, const codegen::TargetSpec& target,
                tune::ScheduleTemplate& t) {
  const int64_t positions = g.oh * g.ow, mb = (g.m + g.block - 1) / g.block;
  const int64_t block_vectors = std::max<int64_t>(g.block / detail::f32_lanes(target), 1);
  // A reduction over 32 inputs or fewer: LLVM, unrolling it whole, spilled the broadcasts of
  // 12-accumulator tiles on AVX2 (MobileNetV2's 32 > 192 at 28x28: 6 x 2 took 2.2x the time of
  // 2 x 4), so such tiles hold 8. With the reduction's outer loops kept rolled (native-te/10),
  // 12 still lost: EfficientNet-B0's 24 > 144 expansions 0.34 ms with 8, 0.37-0.44 with 12.
  const int64_t budget = g.c <= 32 ? std::min<int64_t>(detail::accumulator_budget(target), 8)
                                   : detail::accumulator_budget(target);
  const RegisterTile tile = flat_register_tile(positions, g.shared_blocks(), block_vectors, budget,
                                               6, detail::f32_lanes(target));
  std::vector<int64_t> ow_t = detail::divisors(positions, 28);
  ow_t.insert(ow_t.end(), {2, 3, 4, 6, 8, 12, tile.ow_t});
  const int64_t want = 4 * std::max(threads, 1);
  const int64_t ptiles = (positions + tile.ow_t - 1) / tile.ow_t;
  const int64_t octiles = (mb + tile.oc_t - 1) / tile.oc_t;
  // Chunks that divide their loops: a split_nparts with a tail clamps the tile's start, and LLVM
  // recomputed the clamped weight address at every load of the reduction (a 960 > 160 7x7 layer
  // took 2x oneDNN's time).
  const int64_t chunks = dividing_chunks(ptiles, want);
  const int64_t oc_chunks = dividing_chunks(octiles, want);
  t.space.add("ow_t", detail::at_most(ow_t, std::min<int64_t>(positions, 28)));
  t.space.add("oc_t", detail::divisors(g.shared_blocks(), 6));
  t.space.add("p_chunks", detail::at_most({1, 2, 4, 8, 16, 32, chunks}, ptiles));
  t.space.add("oc_outer", detail::at_most({1, 2, 4, 8, oc_chunks}, mb));
  t.space.add("ci_unroll", detail::at_most({1, 2, 4, 8, 16}, g.in_block()));
  t.space.add("epi_vec", {0, 1});
  t.space.add("par_oc", {0, 1});
  // Floats read per run: every chunk of positions reads all weights, every chunk of channels the
  // whole input. Chunks enough for every thread come first (then the fewer re-reads): MobileNetV2's
  // 960 > 160 at 7x7 in 25 chunks of 2 positions read its weights 25 times (1.4x oneDNN's time).
  const int64_t workers = std::max(threads, 1);
  const double weights = double(g.c) * g.m, input = double(g.c) * positions;
  const double by_positions = chunks * weights + input, by_channels = oc_chunks * input + weights;
  const bool par_oc = (oc_chunks >= workers) == (chunks >= workers) ? by_channels < by_positions
                                                                    : oc_chunks >= workers;
  t.defaults = {{"ow_t", tile.ow_t},
                {"oc_t", tile.oc_t},
                {"p_chunks", par_oc ? 1 : chunks},
                {"oc_outer", par_oc ? oc_chunks : 1},
                {"ci_unroll", 1},
                {"epi_vec", 0},
                {"par_oc", par_oc}};
}

// The row split divides its extent: bounds inference cannot narrow the region of the packed data
// below a split with a tail (the accumulator's clamped coordinates are not linear), so a tail in
// the row split would pack every row in every chunk. The register tile may leave a tail (its
// column and channel loops sit inside the pack's chunk), where conv_tile.h estimates it faster.
void blocked_space(const Geometry& g, int threads, const codegen::TargetSpec& target,
                   tune::ScheduleTemplate& t) {
  const int64_t mb = (g.m + g.block - 1) / g.block;
  const int64_t block_vectors = std::max<int64_t>(g.block / detail::f32_lanes(target), 1);
  const RegisterTile tile =
      default_register_tile(g.ow, g.shared_blocks(), block_vectors,
                            detail::accumulator_budget(target), 28, 4, detail::f32_lanes(target),
                            /*channel_tail=*/g.group == 1);
  std::vector<int64_t> ow_t = detail::divisors(g.ow, 28);
  std::vector<int64_t> oc_t = detail::divisors(g.shared_blocks(), 4);
  ow_t = detail::at_most(with(ow_t, tile.ow_t), 28);
  oc_t = detail::at_most(with(oc_t, tile.oc_t), 4);
  std::vector<int64_t> oh_par = detail::divisors(g.oh, g.oh);
  std::vector<int64_t> oc_outer = detail::at_most(
      {1, 2, 4, 8, dividing_chunks((mb + tile.oc_t - 1) / tile.oc_t, 4 * threads)}, mb);
  std::vector<int64_t> ci_unroll = detail::at_most({1, 2, 4, 8, 16}, g.in_block());
  t.space.add("ow_t", ow_t);
  t.space.add("oc_t", oc_t);
  t.space.add("oh_par", oh_par);
  t.space.add("oc_outer", oc_outer);
  t.space.add("ci_unroll", ci_unroll);
  t.space.add("epi_vec", {0, 1});
  t.space.add("par_oc", {0, 1});
  // Defaults: the register tile above, of at most detail::accumulator_budget vectors (24 of
  // AVX-512's 32 registers, 12 of AVX2's 16; more, with the broadcasts and weights of one step,
  // makes LLVM spill), a block of 16 channels being 16 / lanes vectors; at least 4 parallel
  // chunks per thread, along the output rows unless there are too few of them.
  const int64_t owd = tile.ow_t, ocd = tile.oc_t;
  const int64_t want = 4 * std::max(threads, 1);
  const int64_t tiles = (mb + ocd - 1) / ocd;
  int64_t ohd = 1;
  for (int64_t v : oh_par)
    if ((g.oh + v - 1) / v >= want) ohd = v;
  const bool par_oc = (g.oh + ohd - 1) / ohd < want && tiles >= want;
  // Chunks that divide the channel tiles (as flat_space's).
  const int64_t ocod = par_oc ? dividing_chunks(tiles, want) : 1;
  if (par_oc) ohd = detail::pick_at_most(oh_par, g.oh);
  t.defaults = {{"ow_t", owd}, {"oc_t", ocd}, {"oh_par", ohd},
                {"oc_outer", ocod}, {"ci_unroll", 1}, {"epi_vec", 0}, {"par_oc", par_oc}};
}

void direct_space(const Geometry& g, int lanes, tune::ScheduleTemplate& t) {
  std::vector<int64_t> ow_t = {static_cast<int64_t>(lanes) / 2, lanes, 2 * static_cast<int64_t>(lanes)};
  std::vector<int64_t> oh_t = detail::at_most({1, 2, 4}, g.oh);
  t.space.add("ow_t", ow_t);
  t.space.add("oh_t", oh_t);
  t.defaults = {{"ow_t", g.ow <= lanes / 2 ? lanes / 2 : lanes},
                {"oh_t", detail::pick_at_most(oh_t, g.ow <= lanes / 2 ? 4 : 2)}};
}

// The loops of a conv group's tiled output stage: the channel block, the channel within it, the
// output row (2-D) and the output column. A plain [N, M, (OH,) OW] output splits its channel axis
// by the block; one stored channel-blocked (layout_views.h: [N, M/16, (OH,) OW, 16]) has both.
struct OutAxes {
  te::IterVar mo, mi, oh, ow;
  bool stored = false;  // channel-blocked: the channels within a block are innermost in memory
};

OutAxes out_axes(te::Stage& so, const Geometry& g, int rank) {
  OutAxes a;
  a.stored = rank == g.spatial + 3;
  if (a.stored) {
    a.mo = so.axis(1);
    a.mi = so.axis(rank - 1);
  } else {
    std::tie(a.mo, a.mi) = so.split(so.axis(1), g.block);
  }
  if (g.spatial == 2) a.oh = so.axis(2);
  a.ow = so.axis(g.spatial + 1);
  return a;
}

// The chunk loops of a tiled output stage, outermost first, for chunks of channel tiles
// (`channels`) and chunks of rows or position tiles (`rows`) over the batch: the parallel one
// outermost (`channels` when par_oc), the data packed at the inner one.
struct ChunkLoops {
  std::vector<te::IterVar> order;
  te::IterVar par, pack_at;
};

ChunkLoops chunk_loops(bool par_oc, const te::IterVar& channels, const te::IterVar& batch,
                       const te::IterVar& rows) {
  if (par_oc) return {{channels, batch, rows}, channels, rows};
  return {{rows, batch, channels}, rows, channels};
}

absl::StatusOr<ScheduledGroup> apply_blocked(const AnchorGroup& grp, const Parts& p,
                                             const Geometry& g, const Knobs& k) {
  std::vector<te::Tensor> prepacked;
  te::Schedule s = te::create_schedule(grp.outputs);
  detail::Epilogue e = detail::plan_epilogue(s, grp, p.acc, {p.data, p.wpk});
  const bool w_const = detail::is_constant_input(grp, p.w);
  if (w_const) {
    s[p.wpk].pack();
    prepacked.push_back(p.wpk);
  }
  const bool flat = p.flat;
  const int64_t positions = flat ? g.oh * g.ow : g.ow;
  if (e.out.defined()) {
    const int64_t ow_t = std::clamp<int64_t>(knob_or(k, "ow_t", 8), 1, positions);
    const int64_t oc_t = std::max<int64_t>(knob_or(k, "oc_t", 1), 1);
    const int64_t oh_par = std::clamp<int64_t>(knob_or(k, "oh_par", 1), 1, g.oh);
    const int64_t oc_outer = std::max<int64_t>(knob_or(k, "oc_outer", 1), 1);
    const int64_t ci_unroll = std::max<int64_t>(knob_or(k, "ci_unroll", 1), 1);
    te::Stage so = s[e.out];
    const OutAxes out = out_axes(so, g, e.out.ndim());
    const te::IterVar mi = out.mi;
    const te::IterVar columns = flat ? so.fuse(out.oh, out.ow) : out.ow;
    auto [mt, mr] = so.split(out.mo, oc_t);
    auto [mto, mti] = so.split_nparts(mt, oc_outer);
    auto [owo, owi] = so.split(columns, ow_t);
    // A blocked output is stored 16 channels at a time, whatever epi_vec says.
    const bool channels_inner = out.stored || knob_or(k, "epi_vec", 0);
    std::vector<te::IterVar> inner = channels_inner ? std::vector<te::IterVar>{mr, owi, mi}
                                                    : std::vector<te::IterVar>{mr, mi, owi};
    // The parallel loop is the outermost of output-row chunks (chunks of position tiles when
    // flat) or output-channel chunks; the data is packed at the innermost of the chunk loops, for
    // the rows that chunk reads. Bounds are not inferred through fused loops, so only the flat
    // positions are fused: the accumulator is indexed by the fused position itself.
    te::IterVar par, pack_at, tile_at = owo;
    std::vector<te::IterVar> order;
    if (flat) {
      const int64_t tiles = (positions + ow_t - 1) / ow_t;
      auto [pco, pci] =
          so.split_nparts(owo, std::clamp<int64_t>(knob_or(k, "p_chunks", 1), 1, tiles));
      const ChunkLoops c = chunk_loops(knob_or(k, "par_oc", 0), mto, so.axis(0), pco);
      std::tie(order, par, pack_at) = std::tie(c.order, c.par, c.pack_at);
      order.insert(order.end(), {mti, pci});
      tile_at = pci;
    } else if (g.spatial == 2) {
      auto [oho, ohi] = so.split(out.oh, oh_par);
      const ChunkLoops c = chunk_loops(knob_or(k, "par_oc", 0), mto, so.axis(0), oho);
      std::tie(order, par, pack_at) = std::tie(c.order, c.par, c.pack_at);
      order.insert(order.end(), {mti, ohi, owo});
    } else {
      order = {mto, so.axis(0), mti, owo};
      par = mto;
      pack_at = so.axis(0);
    }
    order.insert(order.end(), inner.begin(), inner.end());
    so.reorder(order);
    so.parallel(par);
    so.vectorize(inner.back());
    te::Stage sa = s[e.acc];
    sa.compute_at(so, tile_at);
    auto [rio, rii] = sa.split(sa.reduce_axis(3), ci_unroll);
    // Of one step's broadcasts (ow_t) and weight vectors (oc_t * block vectors), the smaller set
    // is loaded in the inner loop and stays live across the outer one: with 12 accumulators in
    // AVX2's 16 registers, 6 live broadcasts (a 6 x 2 tile) made LLVM spill, 2 weights did not.
    const int64_t weights = oc_t * std::max<int64_t>(g.block / detail::f32_lanes(grp.target), 1);
    const bool columns_inner = ow_t <= weights;
    const te::IterVar tile_outer = columns_inner ? sa.axis(1) : sa.axis(3);
    const te::IterVar tile_inner = columns_inner ? sa.axis(3) : sa.axis(1);
    sa.reorder({sa.axis(0), sa.axis(2), sa.reduce_axis(0), sa.reduce_axis(1), sa.reduce_axis(2),
                rio, rii, tile_outer, tile_inner, sa.axis(4)});
    if (ci_unroll > 1) sa.unroll(rii);
    sa.unroll(sa.axis(1)).unroll(sa.axis(3)).vectorize(sa.axis(4));
    schedule_pack(s, p.data, g, so, pack_at);
    if (!w_const) s[p.wpk].compute_at(so, pack_at);
  }
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), std::move(prepacked)};
}

absl::StatusOr<ScheduledGroup> apply_direct(const AnchorGroup& grp, const Parts& p,
                                            const Geometry& g, int lanes, const Knobs& k) {
  std::vector<te::Tensor> prepacked;
  te::Schedule s = te::create_schedule(grp.outputs);
  detail::Epilogue e = detail::plan_epilogue(s, grp, p.acc, {p.data});
  if (e.out.defined()) {
    const int64_t ow_t = std::max<int64_t>(knob_or(k, "ow_t", lanes), 1);
    const int64_t oh_t = std::clamp<int64_t>(knob_or(k, "oh_t", 1), 1, g.oh);
    te::Stage so = s[e.out];
    const int rank = e.out.ndim();
    auto [owo, owi] = so.split(so.axis(rank - 1), ow_t);
    if (g.spatial == 2) {
      auto [oho, ohi] = so.split(so.axis(2), oh_t);
      so.reorder({so.axis(0), so.axis(1), oho, owo, ohi, owi});
    }
    te::IterVar par = so.fuse(so.axis(0), so.axis(1));
    so.parallel(par);
    if (ow_t > lanes) {
      auto [vo, vi] = so.split(owi, lanes);
      so.vectorize(vi);
    } else {
      so.vectorize(owi);
    }
    te::Stage sa = s[e.acc];
    sa.compute_at(so, owo);
    auto [ao, ai] = sa.split(sa.axis(3), lanes);
    sa.reorder({sa.axis(0), sa.axis(1), sa.reduce_axis(0), sa.reduce_axis(1), sa.reduce_axis(2),
                sa.axis(2), ao, ai});
    sa.unroll(sa.axis(2)).unroll(ao).vectorize(ai);
    s[p.data].compute_at(so, par);
  }
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), std::move(prepacked)};
}

// Depthwise: tiles of ow_t output columns x 16 channels; parallel over output-row chunks (or
// channel blocks when there are too few rows), data packed per chunk. The default tile is at most
// 14 columns and at most detail::accumulator_budget vectors (AVX2: 6 columns of two vectors).
void depthwise_space(const Geometry& g, int threads, const codegen::TargetSpec& target,
                     tune::ScheduleTemplate& t) {
  const int64_t cb = (g.c + g.block - 1) / g.block;
  std::vector<int64_t> ow_t = detail::divisors(g.ow, 28);
  std::vector<int64_t> oh_par = detail::divisors(g.oh, g.oh);
  t.space.add("ow_t", ow_t);
  t.space.add("oh_par", oh_par);
  t.space.add("epi_vec", {0, 1});
  t.space.add("par_oc", {0, 1});
  const int64_t want = 4 * std::max(threads, 1);
  int64_t ohd = 1;
  for (int64_t v : oh_par)
    if ((g.oh + v - 1) / v >= want) ohd = v;
  const bool par_oc = (g.oh + ohd - 1) / ohd < want && cb >= want;
  const int64_t block_vectors = std::max<int64_t>(g.block / detail::f32_lanes(target), 1);
  const int64_t columns_max = std::min<int64_t>(
      14, std::max<int64_t>(detail::accumulator_budget(target) / block_vectors, 1));
  t.defaults = {{"ow_t", detail::pick_at_most(ow_t, columns_max)},
                {"oh_par", par_oc ? g.oh : ohd},
                {"epi_vec", 0},
                {"par_oc", par_oc}};
}

absl::StatusOr<ScheduledGroup> apply_depthwise(const AnchorGroup& grp, const Parts& p,
                                               const Geometry& g, const Knobs& k) {
  std::vector<te::Tensor> prepacked;
  te::Schedule s = te::create_schedule(grp.outputs);
  detail::Epilogue e = detail::plan_epilogue(s, grp, p.acc, {p.data, p.wpk});
  const bool w_const = detail::is_constant_input(grp, p.w);
  if (w_const) {
    s[p.wpk].pack();
    prepacked.push_back(p.wpk);
  }
  if (e.out.defined()) {
    const int64_t ow_t = std::clamp<int64_t>(knob_or(k, "ow_t", 8), 1, g.ow);
    const int64_t oh_par = std::clamp<int64_t>(knob_or(k, "oh_par", 1), 1, g.oh);
    te::Stage so = s[e.out];
    const OutAxes out = out_axes(so, g, e.out.ndim());
    const te::IterVar mo = out.mo, mi = out.mi;
    auto [owo, owi] = so.split(out.ow, ow_t);
    std::vector<te::IterVar> inner = out.stored || knob_or(k, "epi_vec", 0)
                                         ? std::vector<te::IterVar>{owi, mi}
                                         : std::vector<te::IterVar>{mi, owi};
    te::IterVar par, pack_at;
    std::vector<te::IterVar> order;
    if (g.spatial == 2) {
      auto [oho, ohi] = so.split(out.oh, oh_par);
      const ChunkLoops c = chunk_loops(knob_or(k, "par_oc", 0), mo, so.axis(0), oho);
      std::tie(order, par, pack_at) = std::tie(c.order, c.par, c.pack_at);
      order.insert(order.end(), {ohi, owo});
    } else {
      order = {mo, so.axis(0), owo};
      par = mo;
      pack_at = so.axis(0);
    }
    order.insert(order.end(), inner.begin(), inner.end());
    so.reorder(order);
    so.parallel(par);
    so.vectorize(inner.back());
    te::Stage sa = s[e.acc];
    sa.compute_at(so, owo);
    sa.reorder({sa.axis(0), sa.axis(1), sa.axis(2), sa.reduce_axis(0), sa.reduce_axis(1),
                sa.axis(3), sa.axis(4)});
    // The taps are unrolled too: each tap's padding test then folds to the column's own.
    sa.unroll(sa.reduce_axis(0)).unroll(sa.reduce_axis(1));
    sa.unroll(sa.axis(3)).vectorize(sa.axis(4));
    // Strided, reading a blocked input: the taps read it in place, zeros selected at the padding
    // (cnn_layer_bench, MobileNetV2's 96x112 stride 2: half the time of copying the chunk's
    // rows first; with stride 1 the copy, shared by a chunk's rows, stays ahead).
    if ((g.sh > 1 || g.sw > 1) && pack_reads_blocked(p.data, g))
      s[p.data].compute_inline();
    else
      schedule_pack(s, p.data, g, so, pack_at);
    if (!w_const) s[p.wpk].compute_at(so, pack_at);
  }
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), std::move(prepacked)};
}

}  // namespace

namespace {

// `x` reads a kernel argument stored in blocks of `g`'s channel block.
bool reads_blocked_argument(const te::Tensor& x, const Geometry& g) {
  if (x->tag != kLayoutViewTag) return false;
  const te::Tensor stored = te::input_tensors(x).at(0);
  return g.in_block() == g.block && stored.shape().back() == g.block;
}

}  // namespace

bool runs_flat(const Geometry& g, const te::Tensor& x) {
  return g.pointwise() && g.c % g.block == 0 && reads_blocked_argument(x, g);
}

bool pack_reads_blocked(const te::Tensor& data, const Geometry& g) {
  if (data->tag != "conv_data_pack") return false;
  const std::vector<te::Tensor> in = te::input_tensors(data);
  return in.size() == 1 && reads_blocked_argument(in[0], g);
}

namespace {

// The pack would copy its input as it is: it reads a blocked argument, the window never leaves
// it (no padding) and the channels fill whole blocks.
bool pack_is_copy(const te::Tensor& data, const Geometry& g) {
  return pack_reads_blocked(data, g) && !g.gathers() && g.c % g.block == 0 && g.pt == 0 &&
         g.pl == 0 &&
         (g.oh - 1) * g.sh + (g.kh - 1) * g.dh < g.h && (g.ow - 1) * g.sw + (g.kw - 1) * g.dw < g.w;
}

}  // namespace

void schedule_pack(te::Schedule& s, const te::Tensor& data, const Geometry& g, te::Stage& out,
                   const te::IterVar& at) {
  if (pack_is_copy(data, g)) {
    s[data].compute_inline();
    return;
  }
  te::Stage sp = s[data];
  sp.compute_at(out, at);
  if (pack_reads_blocked(data, g)) sp.vectorize(sp.axis(4));
}

absl::StatusOr<tune::ScheduleTemplate> schedule_template(const AnchorGroup& grp) {
  if (!grp.graph || grp.anchor < 0 || !grp.anchor_output.defined())
    return absl::InvalidArgumentError("conv schedule: incomplete anchor group");
  absl::StatusOr<Parts> parts = find_parts(grp);
  if (!parts.ok()) return parts.status();
  const Node& node = grp.graph->node(grp.anchor);
  const Shape& x = grp.graph->value(node.inputs[0]).type.shape;
  const bool bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  // The compute's block is the last axis of its accumulator.
  const int64_t block = parts->acc->tag == "conv_direct" ? kBlock : parts->acc.shape().back();
  absl::StatusOr<Geometry> g = resolve(node, x, parts->w.shape(), bias, block);
  if (!g.ok()) return g.status();
  const int lanes = detail::f32_lanes(grp.target);
  tune::ScheduleTemplate t;
  parts->flat =
      parts->acc->tag == "conv_nchwc" && runs_flat(*g, te::input_tensors(parts->data).at(0));
  const bool flat = parts->flat;
  t.signature =
      signature(*g, parts->w, detail::is_constant_input(grp, parts->w), parts->acc->tag, flat) +
      detail::target_signature(grp.target);
  t.flops = g->flops();
  if (parts->acc->tag == "conv_dw") {
    depthwise_space(*g, grp.num_threads, grp.target, t);
    t.apply = [grp, p = *parts, geo = *g](const Knobs& k) { return apply_depthwise(grp, p, geo, k); };
  } else if (flat) {
    flat_space(*g, grp.num_threads, grp.target, t);
    t.apply = [grp, p = *parts, geo = *g](const Knobs& k) { return apply_blocked(grp, p, geo, k); };
  } else if (parts->acc->tag == "conv_nchwc") {
    blocked_space(*g, grp.num_threads, grp.target, t);
    t.apply = [grp, p = *parts, geo = *g](const Knobs& k) { return apply_blocked(grp, p, geo, k); };
  } else {
    direct_space(*g, lanes, t);
    t.apply = [grp, p = *parts, geo = *g, lanes](const Knobs& k) {
      return apply_direct(grp, p, geo, lanes, k);
    };
  }
  return t;
}

}  // namespace collage::te_ops::conv
