// Convolution schedules: the blocked NCHWc template (register tiles of ow_t x oc_t vectors of 16
// output channels, data packed per parallel chunk, weight pre-packed), the blocked depthwise one
// (ow_t vectors of 16 channels, one weight vector per tap) and the direct NCHW template (vectors
// along the output row), each with the group's elementwise chain fused into the store; the blocked
// ones also read and write values kept in 16-channel blocks between groups (layout_views.h).
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
std::string signature(const Geometry& g, const te::Tensor& w, bool w_const,
                      const std::string& tag) {
  return str_cat(g.group > 1 ? str_cat(tag, "|") : std::string(), "Conv|x=f32[", g.n, ",", g.c, g.spatial == 2 ? str_cat(",", g.h) : "", ",", g.w,
                 "]|w=", detail::type_signature(w), "|bias=", g.bias ? 1 : 0,
                 "|group=", g.group, "|strides=", g.sh, ",", g.sw, "|dilations=", g.dh, ",", g.dw,
                 "|pads=", g.pt, ",", g.pl, "|out=", g.oh, ",", g.ow, "|wconst=", w_const ? 1 : 0,
                 g.block != kBlock ? str_cat("|block=", g.block) : std::string());
}

// `values` and `v`.
std::vector<int64_t> with(std::vector<int64_t> values, int64_t v) {
  values.push_back(v);
  return values;
}

// The row split divides its extent: bounds inference cannot narrow the region of the packed data
// below a split with a tail (the accumulator's clamped coordinates are not linear), so a tail in
// the row split would pack every row in every chunk. The register tile may leave a tail (its
// column and channel loops sit inside the pack's chunk), where conv_tile.h estimates it faster.
void blocked_space(const Geometry& g, int threads, const codegen::TargetSpec& target,
                   tune::ScheduleTemplate& t) {
  const int64_t mb = (g.m + g.block - 1) / g.block;
  const int64_t block_vectors = std::max<int64_t>(g.block / detail::f32_lanes(target), 1);
  const RegisterTile tile = default_register_tile(
      g.ow, mb, block_vectors, detail::accumulator_budget(target), 28, 4);
  std::vector<int64_t> ow_t = detail::divisors(g.ow, 28);
  std::vector<int64_t> oc_t = detail::divisors(mb, 4);
  ow_t = detail::at_most(with(ow_t, tile.ow_t), 28);
  oc_t = detail::at_most(with(oc_t, tile.oc_t), 4);
  std::vector<int64_t> oh_par = detail::divisors(g.oh, g.oh);
  std::vector<int64_t> oc_outer = detail::at_most({1, 2, 4, 8}, mb);
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
  const int64_t ocod = par_oc ? detail::pick_at_most(oc_outer, tiles) : 1;
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
  if (e.out.defined()) {
    const int64_t ow_t = std::clamp<int64_t>(knob_or(k, "ow_t", 8), 1, g.ow);
    const int64_t oc_t = std::max<int64_t>(knob_or(k, "oc_t", 1), 1);
    const int64_t oh_par = std::clamp<int64_t>(knob_or(k, "oh_par", 1), 1, g.oh);
    const int64_t oc_outer = std::max<int64_t>(knob_or(k, "oc_outer", 1), 1);
    const int64_t ci_unroll = std::max<int64_t>(knob_or(k, "ci_unroll", 1), 1);
    te::Stage so = s[e.out];
    const OutAxes out = out_axes(so, g, e.out.ndim());
    const te::IterVar mi = out.mi;
    auto [mt, mr] = so.split(out.mo, oc_t);
    auto [mto, mti] = so.split_nparts(mt, oc_outer);
    auto [owo, owi] = so.split(out.ow, ow_t);
    // A blocked output is stored 16 channels at a time, whatever epi_vec says.
    const bool channels_inner = out.stored || knob_or(k, "epi_vec", 0);
    std::vector<te::IterVar> inner = channels_inner ? std::vector<te::IterVar>{mr, owi, mi}
                                                    : std::vector<te::IterVar>{mr, mi, owi};
    // The parallel loop is the outermost of output-row chunks or output-channel chunks; the data
    // is packed at the innermost of the chunk loops, for the rows that chunk reads (bounds are
    // not inferred through fused loops, so none is fused).
    te::IterVar par, pack_at;
    std::vector<te::IterVar> order;
    if (g.spatial == 2) {
      auto [oho, ohi] = so.split(out.oh, oh_par);
      if (knob_or(k, "par_oc", 0)) {
        order = {mto, so.axis(0), oho};
        par = mto;
        pack_at = oho;
      } else {
        order = {oho, so.axis(0), mto};
        par = oho;
        pack_at = mto;
      }
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
    sa.compute_at(so, owo);
    auto [rio, rii] = sa.split(sa.reduce_axis(3), ci_unroll);
    sa.reorder({sa.axis(0), sa.axis(2), sa.reduce_axis(0), sa.reduce_axis(1), sa.reduce_axis(2),
                rio, rii, sa.axis(1), sa.axis(3), sa.axis(4)});
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
      if (knob_or(k, "par_oc", 0)) {
        order = {mo, so.axis(0), oho};
        par = mo;
        pack_at = oho;
      } else {
        order = {oho, so.axis(0), mo};
        par = oho;
        pack_at = mo;
      }
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

bool pack_reads_blocked(const te::Tensor& data, const Geometry& g) {
  if (data->tag != "conv_data_pack") return false;
  const std::vector<te::Tensor> in = te::input_tensors(data);
  if (in.size() != 1 || in[0]->tag != kLayoutViewTag) return false;
  const te::Tensor stored = te::input_tensors(in[0]).at(0);
  return g.in_block() == g.block && stored.shape().back() == g.block;
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
  t.signature =
      signature(*g, parts->w, detail::is_constant_input(grp, parts->w), parts->acc->tag) +
      detail::target_signature(grp.target);
  t.flops = g->flops();
  if (parts->acc->tag == "conv_dw") {
    depthwise_space(*g, grp.num_threads, grp.target, t);
    t.apply = [grp, p = *parts, geo = *g](const Knobs& k) { return apply_depthwise(grp, p, geo, k); };
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
