// Convolution computes: blocked NCHWc with the data packed to channel blocks (padding included)
// and the weight packed to [M/b][C/cb][kh][kw][cb][b] (b: Geometry::block, 16 or 8)
// panels (dense and grouped), blocked depthwise, and direct NCHW for the other grouped ones.
#include <algorithm>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/nn_window.h"
#include "te_ops/conv.h"

namespace collage::te_ops::conv {
namespace {

te::Expr clamp(te::Expr v, int64_t hi) { return te::minimum(te::maximum(v, 0), hi - 1); }

// X(n, c, ih, iw) for a padded position: 0 outside the input (reads stay in bounds).
te::Expr padded_read(const te::Tensor& x, const Geometry& g, te::Expr n, te::Expr c, te::Expr ih,
                     te::Expr iw, bool check_c) {
  te::Expr cond;
  auto both = [&](te::Expr e) { cond = cond.defined() ? (cond && e) : e; };
  if (check_c) both(c < g.c);
  if (g.pt > 0 || (g.oh - 1) * g.sh + (g.kh - 1) * g.dh - g.pt >= g.h) both(ih >= 0 && ih < g.h);
  if (g.pl > 0 || (g.ow - 1) * g.sw + (g.kw - 1) * g.dw - g.pl >= g.w) both(iw >= 0 && iw < g.w);
  te::Expr cc = check_c ? te::minimum(c, g.c - 1) : c;
  te::Expr value = g.spatial == 1 ? x(n, cc, clamp(iw, g.w)) : x(n, cc, clamp(ih, g.h), clamp(iw, g.w));
  return cond.defined() ? te::select(cond, value, 0.0f) : value;
}

te::Expr weight(const te::Tensor& w, const Geometry& g, te::Expr m, te::Expr c, te::Expr kh,
                te::Expr kw) {
  return g.spatial == 1 ? w(m, c, kw) : w(m, c, kh, kw);
}

// The ONNX-shaped view of a 4-D [N, M, OH, OW] result (drops OH for 1-D).
std::vector<te::Expr> out_index(const Geometry& g, const std::vector<te::Var>& v) {
  if (g.spatial == 1) return {v[0], v[1], te::Expr(0), v[2]};
  return {v[0], v[1], v[2], v[3]};
}

Shape out_shape(const Geometry& g) {
  return g.spatial == 1 ? Shape{g.n, g.m, g.ow} : Shape{g.n, g.m, g.oh, g.ow};
}

// The NCHW result read from an [N, M/16, OH, OW, 16] accumulator ([N, M/16, 1, OH * OW, 16]
// when `flat`).
te::Tensor unpack(const std::string& name, const Geometry& g, const te::Tensor& acc, bool flat) {
  return te::compute(
      out_shape(g),
      [&](const std::vector<te::Var>& v) {
        std::vector<te::Expr> i = out_index(g, v);
        te::Expr mo = te::floordiv(i[1], g.block), mi = te::floormod(i[1], g.block);
        if (flat) return acc(i[0], mo, te::Expr(0), i[2] * g.ow + i[3], mi);
        return acc(i[0], mo, i[2], i[3], mi);
      },
      name, "conv_unpack");
}

// `g` over its positions as one row: the geometry of a compute that runs_flat.
Geometry flattened(Geometry g) {
  g.w = g.ow = g.oh * g.ow;
  g.h = g.oh = 1;
  return g;
}

// The data pack of a compute that runs_flat: [N, C/ib, 1, OH * OW, ib], position p read at row
// p / W, column p % W (the reads of an inlined pack fold back to p: arith::fold_div_mod).
te::Tensor pack_flat(const std::string& name, const Geometry& g, const te::Tensor& x, int64_t ib) {
  return te::compute(
      {g.n, g.c / ib, 1, g.oh * g.ow, ib},
      [&](te::Var n, te::Var c, te::Var, te::Var p, te::Var ci) {
        return x(n, c * ib + ci, te::floordiv(p, g.w), te::floormod(p, g.w));
      },
      name + ".data_nchwc", "conv_data_pack");
}

}  // namespace

te::Tensor pack_data(const std::string& name, const Geometry& g, const te::Tensor& x, int64_t ib) {
  const int64_t cb = (g.c + ib - 1) / ib;
  const int64_t hp = (g.oh - 1) * g.pack_sh() + (g.kh - 1) * g.dh + 1;
  const int64_t wp = (g.ow - 1) * g.pack_sw() + (g.kw - 1) * g.dw + 1;
  const int64_t gh = g.sh / g.pack_sh(), gw = g.sw / g.pack_sw();  // the gather's steps
  const bool c_tail = g.c % ib != 0;
  return te::compute(
      {g.n, cb, hp, wp, ib},
      [&](te::Var n, te::Var c, te::Var h, te::Var wv, te::Var ci) {
        return padded_read(x, g, n, c * ib + ci, h * gh - g.pt, wv * gw - g.pl, c_tail);
      },
      name + ".data_nchwc", "conv_data_pack");
}

namespace {

std::vector<te::Tensor> blocked(const std::string& name, const Geometry& g, const te::Tensor& x,
                                const te::Tensor& w, const te::Tensor& b) {
  const int64_t ib = g.in_block(), cb = (g.c + ib - 1) / ib, mb = (g.m + g.block - 1) / g.block;
  // Output block o reduces over input blocks base(o) .. base(o) + nrc - 1.
  const int64_t nrc = g.group == 1 ? cb : g.whole_block_groups() ? g.cg() / g.block : 1;
  auto base = [&](te::Expr o) -> te::Expr {
    if (g.group == 1) return te::Expr(0);
    if (g.whole_block_groups()) return te::floordiv(o * g.block, g.mg()) * (g.cg() / g.block);
    return o;  // block-diagonal: the output block's own channels
  };
  const bool flat = runs_flat(g, x);
  te::Tensor xp = flat ? pack_flat(name, g, x, ib) : pack_data(name, g, x, ib);
  const Geometry at = flat ? flattened(g) : g;  // the accumulator's positions
  te::Tensor wpk = te::compute(
      {mb, nrc, g.kh, g.kw, ib, g.block},
      [&](const std::vector<te::Var>& v) {
        te::Expr m = v[0] * g.block + v[5], c = (base(v[0]) + v[1]) * ib + v[4];
        // The input channel within its group (all of them for group 1).
        te::Expr local = g.group == 1 ? c : c - te::floordiv(m, g.mg()) * g.cg();
        te::Expr cond;
        auto both = [&](te::Expr e) { cond = cond.defined() ? (cond && e) : e; };
        if (g.m % g.block != 0) both(m < g.m);
        if (g.group == 1 && g.c % ib != 0) both(c < g.c);
        if (g.block_diagonal()) both(local >= 0 && local < g.cg());
        te::Expr value = weight(w, g, te::minimum(m, g.m - 1),
                                te::minimum(te::maximum(local, 0), g.cg() - 1), v[2], v[3]);
        return cond.defined() ? te::select(cond, value, 0.0f) : value;
      },
      name + ".weight_packed", "conv_weight_pack");
  te::IterVar rc = te::reduce_axis({0, nrc}, "rc");
  te::IterVar rh = te::reduce_axis({0, g.kh}, "rh");
  te::IterVar rw = te::reduce_axis({0, g.kw}, "rw");
  te::IterVar ri = te::reduce_axis({0, ib}, "ri");
  te::Tensor acc = te::compute(
      {g.n, mb, at.oh, at.ow, g.block},
      [&](const std::vector<te::Var>& v) {
        te::Expr ih = v[2] * at.pack_sh() + rh * at.dh, iw = v[3] * at.pack_sw() + rw * at.dw;
        te::Expr blk = base(v[1]) + rc;
        te::Expr src = xp(v[0], blk, ih, iw, ri) * wpk(v[1], rc, rh, rw, ri, v[4]);
        if (!b.defined()) return te::sum(src, {rc, rh, rw, ri});
        return te::sum(src, {rc, rh, rw, ri}, b(te::minimum(v[1] * g.block + v[4], g.m - 1)));
      },
      name + ".nchwc", "conv_nchwc");
  return {unpack(name, g, acc, flat)};
}

// Depthwise: [N, C/16, OH, OW, 16] = sum over the window of packed data times a 16-channel
// weight vector per tap.
std::vector<te::Tensor> depthwise(const std::string& name, const Geometry& g, const te::Tensor& x,
                                  const te::Tensor& w, const te::Tensor& b) {
  const int64_t cb = (g.c + g.block - 1) / g.block;
  te::Tensor xp = pack_data(name, g, x, g.block);
  te::Tensor wpk = te::compute(
      {cb, g.kh, g.kw, g.block},
      [&](te::Var o, te::Var kh, te::Var kw, te::Var i) {
        te::Expr c = o * g.block + i;
        te::Expr value = weight(w, g, te::minimum(c, g.c - 1), te::Expr(0), kh, kw);
        return g.c % g.block != 0 ? te::select(c < g.c, value, 0.0f) : value;
      },
      name + ".weight_packed", "conv_weight_pack");
  te::IterVar rh = te::reduce_axis({0, g.kh}, "rh");
  te::IterVar rw = te::reduce_axis({0, g.kw}, "rw");
  te::Tensor acc = te::compute(
      {g.n, cb, g.oh, g.ow, g.block},
      [&](const std::vector<te::Var>& v) {
        te::Expr src = xp(v[0], v[1], v[2] * g.pack_sh() + rh * g.dh,
                          v[3] * g.pack_sw() + rw * g.dw, v[4]) *
                       wpk(v[1], rh, rw, v[4]);
        if (!b.defined()) return te::sum(src, {rh, rw});
        return te::sum(src, {rh, rw}, b(te::minimum(v[1] * g.block + v[4], g.c - 1)));
      },
      name + ".dw", "conv_dw");
  return {unpack(name, g, acc, false)};
}

std::vector<te::Tensor> direct(const std::string& name, const Geometry& g, const te::Tensor& x,
                               const te::Tensor& w, const te::Tensor& b) {
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const int64_t hp = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  const int64_t wp = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  te::Tensor xpad = te::compute(
      {g.n, g.c, hp, wp},
      [&](te::Var n, te::Var c, te::Var h, te::Var wv) {
        return padded_read(x, g, n, c, h - g.pt, wv - g.pl, false);
      },
      name + ".padded", "conv_pad");
  te::IterVar rc = te::reduce_axis({0, cg}, "rc");
  te::IterVar rh = te::reduce_axis({0, g.kh}, "rh");
  te::IterVar rw = te::reduce_axis({0, g.kw}, "rw");
  te::Tensor acc = te::compute(
      {g.n, g.m, g.oh, g.ow},
      [&](te::Var n, te::Var m, te::Var oh, te::Var ow) {
        te::Expr c = g.group == 1 ? te::Expr(rc) : te::floordiv(m, mg) * cg + rc;
        te::Expr src = xpad(n, c, oh * g.sh + rh * g.dh, ow * g.sw + rw * g.dw) *
                       weight(w, g, m, rc, rh, rw);
        if (!b.defined()) return te::sum(src, {rc, rh, rw});
        return te::sum(src, {rc, rh, rw}, b(m));
      },
      g.spatial == 1 ? name + ".direct" : name, "conv_direct");
  if (g.spatial == 2) return {acc};
  te::Tensor out = te::compute(
      out_shape(g), [&](te::Var n, te::Var m, te::Var ow) { return acc(n, m, 0, ow); }, name,
      "conv_view");
  return {out};
}

}  // namespace

int64_t compute_block(const Graph& group) {
  for (const std::vector<ValueId>* side : {&group.inputs(), &group.outputs()})
    for (ValueId v : *side)
      if (group.value(v).layout.c_block == kSmallBlock) return kSmallBlock;
  return kBlock;
}

absl::StatusOr<Geometry> resolve(const Node& node, const Shape& x, const Shape& w, bool bias,
                                 int64_t block) {
  const auto& a = node.get<ConvAttrs>();
  auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError(str_cat("Conv '", node.name, "': ", what));
  };
  if (x.size() != 3 && x.size() != 4)
    return fail(str_cat("input shape [", shape_to_string(x),
                        "] is not supported by the TE library (1-D and 2-D convolutions only)"));
  if (w.size() != x.size() || a.group < 1 || x[1] != w[1] * a.group || w[0] % a.group != 0)
    return fail(str_cat("weight shape [", shape_to_string(w), "] does not match input [",
                        shape_to_string(x), "] with group ", a.group));
  Geometry g;
  g.spatial = static_cast<int>(x.size()) - 2;
  g.n = x[0];
  g.c = x[1];
  g.m = w[0];
  g.group = a.group;
  g.bias = bias;
  g.block = block;
  const Shape in(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  absl::StatusOr<ops::Window> win = ops::resolve_window(
      in, kernel, {a.auto_pad, a.strides, a.dilations, a.pads, /*ceil_mode=*/false});
  if (!win.ok()) return fail(std::string(win.status().message()));
  const int wi = g.spatial - 1;
  if (g.spatial == 2) {
    g.h = win->in[0];
    g.kh = win->kernel[0];
    g.oh = win->out[0];
    g.sh = win->stride[0];
    g.dh = win->dilation[0];
    g.pt = win->pad_begin[0];
  }
  g.w = win->in[wi];
  g.kw = win->kernel[wi];
  g.ow = win->out[wi];
  g.sw = win->stride[wi];
  g.dw = win->dilation[wi];
  g.pl = win->pad_begin[wi];
  if (g.oh < 1 || g.ow < 1) return fail("empty output");
  return g;
}

absl::StatusOr<std::vector<te::Tensor>> compute(const Graph& graph, const Node& node,
                                                std::span<const te::Tensor> inputs) {
  if (inputs.size() < 2 || !inputs[0].defined() || !inputs[1].defined())
    return absl::InvalidArgumentError(str_cat("Conv '", node.name, "': needs inputs X and W"));
  const te::Tensor& x = inputs[0];
  const te::Tensor& w = inputs[1];
  te::Tensor b = inputs.size() > 2 ? inputs[2] : te::Tensor();
  for (const te::Tensor& t : {x, w, b})
    if (t.defined() && t.dtype() != DType::f32)
      return absl::InvalidArgumentError(str_cat("Conv '", node.name, "': input '", t.name(),
                                                "' is ", dtype_name(t.dtype()),
                                                ", the TE library supports f32 only"));
  absl::StatusOr<Geometry> g =
      resolve(node, x.shape(), w.shape(), b.defined(), compute_block(graph));
  if (!g.ok()) return g.status();
  if (g->depthwise()) return depthwise(node.name, *g, x, w, b);
  return g->blocked() ? blocked(node.name, *g, x, w, b) : direct(node.name, *g, x, w, b);
}

}  // namespace collage::te_ops::conv
