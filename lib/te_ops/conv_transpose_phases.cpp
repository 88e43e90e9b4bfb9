// ConvTranspose as phase convolutions (conv_transpose_phases.h).
#include "te_ops/conv_transpose_phases.h"

#include <algorithm>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "te_ops/conv_dense_common.h"
#include "te_ops/conv_tile.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops::deconv {
namespace {

using te::Expr;

int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// One spatial dimension: output index o = i * s + a reads packed index i + shift(a) + r for the
// packed tap r in [0, taps), the kernel tap being t0(a) + s * (taps - 1 - r) (none past the
// kernel); the packed input holds input index y at y + lead.
struct Dim {
  int64_t in, out, kernel, stride, pad;
  int64_t taps() const { return (kernel + stride - 1) / stride; }
  int64_t first_shift() const { return floor_div(pad, stride); }  // d(0), the smallest d(a)
  int64_t lead() const { return taps() - 1 - first_shift(); }
  int64_t packed() const {
    return out / stride + floor_div(stride - 1 + pad, stride) - first_shift() + taps() - 1;
  }
  Expr shift(Expr a) const { return te::floordiv(a + pad, stride) - first_shift(); }
  Expr tap(Expr a, Expr r) const {
    return te::floormod(a + pad, stride) + (taps() - 1 - Expr(r)) * stride;
  }
  // Kernel taps phase a admits.
  int64_t admitted(int64_t a) const {
    const int64_t t0 = ((a + pad) % stride + stride) % stride;
    return t0 < kernel ? (kernel - 1 - t0) / stride + 1 : 0;
  }
};

Dim rows(const PhaseGeometry& g) {
  return {g.h, g.oh, g.kh, g.sh, g.pt};
}
Dim cols(const PhaseGeometry& g) {
  return {g.w, g.ow, g.kw, g.sw, g.pl};
}

}  // namespace

double PhaseGeometry::flops() const {
  const Dim r = rows(*this), c = cols(*this);
  int64_t taps = 0;
  for (int64_t a = 0; a < sh; ++a)
    for (int64_t b = 0; b < sw; ++b) taps += r.admitted(a) * c.admitted(b);
  return 2.0 * double(n) * double(m) * double(oh_phase()) * double(ow_phase()) * double(this->c) *
         double(taps);
}

absl::StatusOr<Window> resolve_window(const Node& node, const Shape& x, const Shape& w,
                                      const Shape& out) {
  const auto& a = node.get<ConvTransposeAttrs>();
  const size_t rank = x.size() - 2;
  const bool explicit_pads = a.auto_pad == "NOTSET" && a.output_shape.empty() && !a.pads.empty();
  if (explicit_pads && a.pads.size() != 2 * rank)
    return node_error(node, "pads has the wrong length");
  auto list = [](const std::vector<int64_t>& v, size_t k, int64_t fallback) {
    return v.empty() ? fallback : v[k];
  };
  Window win;
  for (size_t k = 0; k < rank; ++k) {
    const int64_t stride = list(a.strides, k, 1), dil = list(a.dilations, k, 1);
    const int64_t kernel = w[2 + k];
    const int64_t full =
        stride * (x[2 + k] - 1) + list(a.output_padding, k, 0) + (kernel - 1) * dil + 1;
    const int64_t total = std::max<int64_t>(0, full - out[2 + k]);  // output_shape may exceed full
    win.stride.push_back(stride);
    win.dilation.push_back(dil);
    win.pad.push_back(explicit_pads                ? a.pads[k]
                      : a.auto_pad == "SAME_UPPER" ? total / 2
                                                   : total - total / 2);
  }
  return win;
}

std::optional<PhaseGeometry> phase_geometry(const Shape& x, const Shape& w, const Shape& out,
                                            int64_t group, const Window& win) {
  if (x.size() != 4 || w.size() != 4 || out.size() != 4 || group != 1 || w[0] != x[1]) return {};
  for (size_t k = 0; k < 2; ++k)
    if (win.dilation[k] != 1 || win.stride[k] < 1 || out[2 + k] % win.stride[k] != 0 ||
        win.pad[k] < 0)
      return {};
  PhaseGeometry g;
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.m = w[1];
  g.kh = w[2];
  g.kw = w[3];
  g.oh = out[2];
  g.ow = out[3];
  g.sh = win.stride[0];
  g.sw = win.stride[1];
  g.pt = win.pad[0];
  g.pl = win.pad[1];
  // Few output channels take a block of 8: a block of 16 would compute more padding than values.
  g.block = g.m <= 8 ? 8 : 16;
  if (out[1] != g.m || g.oh < g.sh || g.ow < g.sw) return {};
  return g;
}

std::optional<PhaseGeometry> phase_geometry(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2) return {};
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& w = graph.value(node.inputs[1]).type.shape;
  const Shape& out = output_type(graph, node).shape;
  if (x.size() != 4 || w.size() != 4 || out.size() != 4) return {};
  absl::StatusOr<Window> win = resolve_window(node, x, w, out);
  if (!win.ok()) return {};
  return phase_geometry(x, w, out, node.get<ConvTransposeAttrs>().group, *win);
}

std::vector<te::Tensor> phases_compute(const std::string& name, const PhaseGeometry& g,
                                       const te::Tensor& x, const te::Tensor& w,
                                       const te::Tensor& b) {
  const Dim dr = rows(g), dc = cols(g);
  const int64_t ib = g.in_block, bl = g.block;
  te::Tensor xp = te::compute(
      {g.n, g.c_blocks(), dr.packed(), dc.packed(), ib},
      [&](const std::vector<te::Var>& v) {
        Expr c = v[1] * ib + v[4], y = v[2] - dr.lead(), z = v[3] - dc.lead();
        Expr inside = y >= 0 && y < g.h && z >= 0 && z < g.w;
        if (g.c % ib != 0) inside = inside && c < g.c;
        return te::select(inside, x(v[0], clamp_index(c, g.c), clamp_index(y, g.h), clamp_index(z, g.w)), 0.0f);
      },
      name + ".data_phases", "conv_transpose_data");
  // [SH, SW, M/B, C/IB, taps_h, taps_w, IB, B]
  te::Tensor wpk = te::compute(
      {g.sh, g.sw, g.m_blocks(), g.c_blocks(), g.taps_h(), g.taps_w(), ib, bl},
      [&](const std::vector<te::Var>& v) {
        Expr c = v[3] * ib + v[6], m = v[2] * bl + v[7];
        Expr th = dr.tap(v[0], v[4]), tw = dc.tap(v[1], v[5]);
        Expr valid = th < g.kh && tw < g.kw;
        if (g.c % ib != 0) valid = valid && c < g.c;
        if (g.m % bl != 0) valid = valid && m < g.m;
        return te::select(valid, w(clamp_index(c, g.c), clamp_index(m, g.m), clamp_index(th, g.kh), clamp_index(tw, g.kw)),
                          0.0f);
      },
      name + ".weight_phases", "pack");
  te::IterVar rc = te::reduce_axis({0, g.c_blocks()}, "rc");
  te::IterVar rh = te::reduce_axis({0, g.taps_h()}, "rh");
  te::IterVar rw = te::reduce_axis({0, g.taps_w()}, "rw");
  te::IterVar ri = te::reduce_axis({0, ib}, "ri");
  te::Tensor acc = te::compute(
      {g.n, g.sh, g.sw, g.m_blocks(), g.oh_phase(), g.ow_phase(), bl},
      [&](const std::vector<te::Var>& v) {
        Expr src = xp(v[0], rc, v[4] + dr.shift(v[1]) + rh, v[5] + dc.shift(v[2]) + rw, ri) *
                   wpk(v[1], v[2], v[3], rc, rh, rw, ri, v[6]);
        if (!b.defined()) return te::sum(src, {rc, rh, rw, ri});
        return te::sum(src, {rc, rh, rw, ri}, b(te::minimum(v[3] * bl + v[6], g.m - 1)));
      },
      name + ".phases", "conv_transpose_phases");
  return {te::compute(
      {g.n, g.m, g.oh, g.ow},
      [&](te::Var n, te::Var m, te::Var oh, te::Var ow) {
        return acc(n, te::floormod(oh, g.sh), te::floormod(ow, g.sw), te::floordiv(m, bl),
                   te::floordiv(oh, g.sh), te::floordiv(ow, g.sw), te::floormod(m, bl));
      },
      name, "conv_transpose_unpack")};
}

absl::StatusOr<ScheduledGroup> schedule_phases(const AnchorGroup& grp, const PhaseGeometry& g) {
  const Node& node = grp.graph->node(grp.anchor);
  te::Schedule s = te::create_schedule(grp.outputs);
  te::Tensor xp, wpk, acc;
  for (const te::Tensor& t : s.stage_tensors()) {
    if (t->tag == "conv_transpose_data") xp = t;
    if (t->tag == "pack" && t.name().ends_with(".weight_phases")) wpk = t;
    if (t->tag == "conv_transpose_phases") acc = t;
  }
  if (!xp.defined() || !wpk.defined() || !acc.defined())
    return node_error(node, "the phase schedule found no phase computes");
  detail::Epilogue e = detail::plan_epilogue(s, grp, acc, {xp, wpk});
  if (!e.out.defined() || e.out.shape() != Shape{g.n, g.m, g.oh, g.ow})
    return node_error(node, "the phase schedule takes one output of the ConvTranspose's shape");
  std::vector<te::Tensor> prepacked;
  if (detail::is_constant_input(grp, te::input_tensors(wpk).at(0))) {
    s[wpk].pack();
    prepacked.push_back(wpk);
  }
  const int64_t lanes = detail::f32_lanes(grp.target);
  const int64_t block_vectors = std::max<int64_t>(g.block / lanes, 1);
  // The register tile: as many columns of a phase as the accumulators hold (each weight vector
  // loaded serves them all), then channel blocks while accumulators remain; both divide their
  // extents. A phase has few columns (the output's over the stride), so the conv's tile rule,
  // which prefers channel blocks, would load a weight vector per FMA there.
  const int64_t tiles_max =
      std::max<int64_t>(detail::accumulator_budget(grp.target) / block_vectors, 1);
  conv::RegisterTile tile;
  for (int64_t d : detail::divisors(g.ow_phase(), tiles_max)) tile.ow_t = d;
  for (int64_t d : detail::divisors(g.m_blocks(), tiles_max / tile.ow_t)) tile.oc_t = d;
  // Parallel chunks: of phase rows (each packs the rows it reads and reads every weight), or of
  // output channel tiles (each packs the whole input and reads its channels' weights), whichever
  // reads fewer bytes again; deep layers of a generator hold far more weight than input.
  const int64_t threads = std::max(grp.num_threads, 1), want = 4 * threads;
  int64_t chunk_rows = 1;
  for (int64_t d : detail::divisors(g.oh_phase(), g.oh_phase()))
    if (g.oh_phase() / d >= want) chunk_rows = d;
  const int64_t channel_tiles = g.m_blocks() / tile.oc_t;
  const int64_t channel_chunks = std::min(channel_tiles, 2 * threads);
  const double weight_floats =
      double(g.sh * g.sw * g.m_blocks() * g.block) * double(g.c) * double(g.taps_h() * g.taps_w());
  const double data_floats = double(g.c) * double(rows(g).packed() * cols(g).packed());
  const bool by_channels =
      channel_tiles >= threads &&
      double(channel_chunks) * data_floats < double(g.oh_phase() / chunk_rows) * weight_floats;

  te::Stage so = s[e.out];
  auto [mo, mi] = so.split(so.axis(1), g.block);
  auto [i, a] = so.split(so.axis(2), g.sh);
  auto [j, b] = so.split(so.axis(3), g.sw);
  auto [mt, mr] = so.split(mo, tile.oc_t);
  auto [jo, ji] = so.split(j, tile.ow_t);
  te::IterVar par;
  if (by_channels) {
    auto [mto, mti] = so.split_nparts(mt, channel_chunks);
    so.reorder({mto, so.axis(0), mti, a, b, i, jo, mr, ji, mi});
    par = mto;
  } else {
    auto [io, ii] = so.split(i, chunk_rows);
    so.reorder({io, so.axis(0), mt, a, b, ii, jo, mr, ji, mi});
    par = io;
  }
  if (threads > 1) so.parallel(par);
  so.vectorize(mi);
  te::Stage sa = s[acc];
  sa.compute_at(so, jo);
  sa.reorder({sa.axis(0), sa.axis(1), sa.axis(2), sa.axis(4), sa.reduce_axis(0), sa.reduce_axis(1),
              sa.reduce_axis(2), sa.reduce_axis(3), sa.axis(3), sa.axis(5), sa.axis(6)});
  sa.unroll(sa.axis(3)).unroll(sa.axis(5)).vectorize(sa.axis(6));
  te::Stage sp = s[xp];
  sp.compute_at(so, par);
  // Rows of the (plain) input read along their columns; the packed block written 8 floats apart.
  sp.reorder({sp.axis(0), sp.axis(1), sp.axis(4), sp.axis(2), sp.axis(3)});
  if (prepacked.empty()) s[wpk].compute_at(so, par);
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), std::move(prepacked)};
}

}  // namespace collage::te_ops::deconv
