// The Winograd conv schedule: parallel over chunks of tile rows; per chunk the input packed
// (a vector of channels at a time from a blocked value, or read in place), transformed for every
// input block, the batched GEMM in register tiles of tw_t tiles x oc_t blocks of output channels
// (the transformed input broadcast, the transformed weight loaded as vectors), then the output
// transform and the group's elementwise chain written a block of channels (16, or AVX2's 8) at a
// time, blocked or plain.
#include <algorithm>

#include "core/str_cat.h"
#include "te_ops/conv_dense_common.h"
#include "te_ops/winograd.h"
#include "te_ops/winograd_parts.h"

namespace collage::te_ops::winograd {
namespace {

using tune::Knobs;
using tune::knob_or;

struct Parts {
  te::Tensor out, gemm, input, rows, weight, data, w;
};

absl::StatusOr<Parts> find_parts(const AnchorGroup& grp) {
  Parts p;
  p.out = grp.anchor_output;
  auto find = [](const te::Tensor& t, const char* tag) {
    for (const te::Tensor& in : te::input_tensors(t))
      if (in->tag == tag) return in;
    return te::Tensor();
  };
  p.gemm = find(p.out, kGemmTag);
  if (p.gemm.defined()) {
    p.input = find(p.gemm, kInputTag);
    p.weight = find(p.gemm, kWeightTag);
  }
  if (p.input.defined()) p.rows = find(p.input, kInputRowsTag);
  if (p.rows.defined()) p.data = find(p.rows, "conv_data_pack");
  if (p.weight.defined()) p.w = te::input_tensors(p.weight)[0];
  if (!p.data.defined() || !p.w.defined())
    return absl::InvalidArgumentError(str_cat("winograd schedule: anchor output '",
                                              p.out.name(), "' was not built by the Winograd compute"));
  return p;
}

std::vector<int64_t> divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

void space(const Tiling& t, int threads,
           const codegen::TargetSpec& target, tune::ScheduleTemplate& tmpl) {
  std::vector<int64_t> tw_t = divisors(t.tw, 16);
  std::vector<int64_t> oc_t = divisors(t.mb, 4);
  std::vector<int64_t> th_par = divisors(t.th, t.th);
  tmpl.space.add("tw_t", tw_t);
  tmpl.space.add("oc_t", oc_t);
  tmpl.space.add("th_par", th_par);
  // Defaults: the largest register tile within the accumulator budget (more tiles first, then
  // more channel blocks).
  const int64_t block_vectors = std::max<int64_t>(t.block / detail::f32_lanes(target), 1);
  const int64_t budget = std::max<int64_t>(detail::accumulator_budget(target) / block_vectors, 1);
  int64_t twd = 1, ocd = 1;
  for (int64_t a : tw_t)
    for (int64_t o : oc_t)
      if (a * o <= budget && (a * o > twd * ocd || (a * o == twd * ocd && a > twd))) {
        twd = a;
        ocd = o;
      }
  // Tile rows per chunk: the transformed weight is read once per chunk, so as many as keep the
  // chunk's transformed input and GEMM result within about 1 MiB (L2), while every thread has a
  // chunk.
  const int64_t row_bytes = t.alpha * t.alpha * t.tw * (t.ib * t.cb + t.block * t.mb) * 4;
  int64_t thd = 1;
  for (int64_t v : th_par)
    if (t.th / v >= std::max(threads, 1) && v * row_bytes <= (int64_t{1} << 20)) thd = v;
  tmpl.defaults = {{"tw_t", twd}, {"oc_t", ocd}, {"th_par", thd}};
}

absl::StatusOr<ScheduledGroup> apply(const AnchorGroup& grp, const Parts& p,
                                     const conv::Geometry& g, const Tiling& t, const Knobs& k) {
  if (!detail::is_constant_input(grp, p.w))
    return absl::InvalidArgumentError(
        str_cat("winograd schedule: the weight of '", p.out.name(), "' is not a constant"));
  te::Schedule s = te::create_schedule(grp.outputs);
  detail::Epilogue e = detail::plan_epilogue(s, grp, p.gemm, {p.data, p.rows, p.input, p.weight});
  const te::Tensor local = s.cache_write(p.gemm);
  s[p.weight].pack();
  std::vector<te::Tensor> prepacked = {p.weight};
  if (e.out.defined()) {
    const int64_t tw_t = std::clamp<int64_t>(knob_or(k, "tw_t", 1), 1, t.tw);
    const int64_t oc_t = std::clamp<int64_t>(knob_or(k, "oc_t", 1), 1, t.mb);
    const int64_t th_par = std::clamp<int64_t>(knob_or(k, "th_par", 1), 1, t.th);
    te::Stage so = s[e.out];
    const int rank = e.out.ndim();
    te::IterVar mo, mi;
    if (rank == 5) {  // stored in channel blocks
      mo = so.axis(1);
      mi = so.axis(4);
    } else {
      std::tie(mo, mi) = so.split(so.axis(1), t.block);
    }
    auto [th, ohi] = so.split(so.axis(2), t.m);
    auto [tw, owi] = so.split(so.axis(3), t.m);
    auto [tho, thi] = so.split(th, th_par);
    so.reorder({tho, so.axis(0), thi, mo, tw, ohi, owi, mi});
    so.parallel(tho);
    so.unroll(ohi).unroll(owi).vectorize(mi);

    // The GEMM accumulates a register tile in a local buffer, then stores it.
    te::Stage sg = s[e.acc];
    sg.compute_at(so, so.axis(0));
    auto [two, twi] = sg.split(sg.axis(4), tw_t);
    auto [mbo, mbi] = sg.split(sg.axis(5), oc_t);
    sg.reorder({sg.axis(0), sg.axis(1), sg.axis(2), sg.axis(3), mbo, two, twi, mbi, sg.axis(6)});
    sg.vectorize(sg.axis(6));
    te::Stage sl = s[local];
    sl.compute_at(sg, two);
    sl.reorder({sl.axis(0), sl.axis(1), sl.axis(2), sl.axis(3), sl.reduce_axis(0),
                sl.reduce_axis(1), sl.axis(4), sl.axis(5), sl.axis(6)});
    sl.unroll(sl.axis(4)).unroll(sl.axis(5)).vectorize(sl.axis(6));

    te::Stage si = s[p.input];
    si.compute_at(so, so.axis(0));
    si.reorder({si.axis(2), si.axis(3), si.axis(5), si.axis(4), si.axis(0), si.axis(1), si.axis(6)});
    si.unroll(si.axis(0)).unroll(si.axis(1)).vectorize(si.axis(6));
    te::Stage sr = s[p.rows];
    sr.compute_at(si, si.axis(4));
    sr.reorder({sr.axis(2), sr.axis(3), sr.axis(4), sr.axis(5), sr.axis(0), sr.axis(1), sr.axis(6)});
    sr.unroll(sr.axis(0)).unroll(sr.axis(1)).vectorize(sr.axis(6));

    // The pack of a chunk: the windows of its whole tiles (read in place when that is a copy).
    conv::Geometry tiles = g;
    tiles.oh = t.th * t.m;
    tiles.ow = t.tw * t.m;
    conv::schedule_pack(s, p.data, tiles, so, so.axis(0));
  }
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), std::move(prepacked)};
}

}  // namespace

absl::StatusOr<tune::ScheduleTemplate> schedule_template(const AnchorGroup& grp) {
  if (!grp.graph || grp.anchor < 0 || !grp.anchor_output.defined())
    return absl::InvalidArgumentError("winograd schedule: incomplete anchor group");
  if (grp.anchor_output->tag != kOutputTag) return conv::schedule_template(grp);
  absl::StatusOr<Parts> parts = find_parts(grp);
  if (!parts.ok()) return parts.status();
  const Node& node = grp.graph->node(grp.anchor);
  const Shape& x = grp.graph->value(node.inputs[0]).type.shape;
  const bool bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  // The compute's channel block is the last axis of its GEMM.
  absl::StatusOr<conv::Geometry> g =
      conv::resolve(node, x, parts->w.shape(), bias, parts->gemm.shape().back());
  if (!g.ok()) return g.status();
  // The alpha x alpha transform points give the tile size.
  const int tile = static_cast<int>(parts->gemm.shape()[0]) - 2;
  const Tiling t = tiling(*g, tile);
  tune::ScheduleTemplate tmpl;
  tmpl.signature = str_cat("winograd", tile, "|Conv|x=f32[", g->n, ",", g->c, ",", g->h, ",", g->w,
                           "]|w=", detail::type_signature(parts->w), "|bias=", bias ? 1 : 0,
                           "|pads=", g->pt, ",", g->pl, "|out=", g->oh, ",", g->ow,
                           g->block != conv::kBlock ? str_cat("|block=", g->block) : std::string()) +
                   detail::target_signature(grp.target);
  tmpl.flops = g->flops();
  space(t, grp.num_threads, grp.target, tmpl);
  tmpl.apply = [grp, p = *parts, geo = *g, t](const Knobs& k) { return apply(grp, p, geo, t, k); };
  return tmpl;
}

}  // namespace collage::te_ops::winograd
