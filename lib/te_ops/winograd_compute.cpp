// Winograd F(m x m, 3 x 3) computes: the transform matrices (Lavin and Gray's, interpolation
// points 0, +-1, +-2 and infinity for m = 4; 0, +-1 and infinity for m = 2), the weight
// transform (a pack stage), the separable input transform, the batched GEMM over input channels
// and the output transform, each transform written out as explicit sums of its nonzero terms.
#include <functional>

#include "core/str_cat.h"
#include "te_ops/conv_dense_common.h"
#include "te_ops/winograd.h"
#include "te_ops/winograd_parts.h"

namespace collage::te_ops::winograd {
namespace {

// Y = AT [(G g G^T) .* (BT d BT^T)] AT^T for a tile d of alpha x alpha inputs and a 3 x 3 filter g.
struct Matrices {
  int m = 0, alpha = 0;
  std::vector<std::vector<double>> bt, g, at;
};

const Matrices& matrices(int tile) {
  static const Matrices f2{2,
                           4,
                           {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
                           {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
                           {{1, 1, 1, 0}, {0, 1, -1, -1}}};
  static const Matrices f4{
      4,
      6,
      {{4, 0, -5, 0, 1, 0},
       {0, -4, -4, 1, 1, 0},
       {0, 4, -4, -1, 1, 0},
       {0, -2, -1, 2, 1, 0},
       {0, 2, -1, -2, 1, 0},
       {0, 4, 0, -5, 0, 1}},
      {{1.0 / 4, 0, 0},
       {-1.0 / 6, -1.0 / 6, -1.0 / 6},
       {-1.0 / 6, 1.0 / 6, -1.0 / 6},
       {1.0 / 24, 1.0 / 12, 1.0 / 6},
       {1.0 / 24, -1.0 / 12, 1.0 / 6},
       {0, 0, 1}},
      {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};
  return tile == 2 ? f2 : f4;
}

// sum_i coef[i] * term(i) over the nonzero coefficients, without multiplying by +-1.
te::Expr combine(const std::vector<double>& coef, const std::function<te::Expr(int)>& term) {
  te::Expr acc;
  for (size_t i = 0; i < coef.size(); ++i) {
    const double c = coef[i];
    if (c == 0) continue;
    te::Expr t = term(static_cast<int>(i));
    if (c != 1 && c != -1) t = te::make_float(DType::f32, c) * t;
    if (!acc.defined())
      acc = c == -1 ? -t : t;
    else
      acc = c == -1 ? acc - t : acc + t;
  }
  return acc.defined() ? acc : te::make_float(DType::f32, 0);
}

// The case of `v` (a loop index in [0, n)) as a chain of selects; the code generator folds it
// once the loop over v is unrolled.
te::Expr by_case(const te::Expr& v, int n, const std::function<te::Expr(int)>& value) {
  te::Expr out = value(n - 1);
  for (int i = n - 2; i >= 0; --i) out = te::select(v == i, value(i), out);
  return out;
}

}  // namespace

bool applies(const conv::Geometry& g) {
  return g.spatial == 2 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
         g.dw == 1 && g.group == 1;
}

Tiling tiling(const conv::Geometry& g, int tile) {
  Tiling t;
  t.m = tile;
  t.alpha = tile + 2;
  t.th = (g.oh + tile - 1) / tile;
  t.tw = (g.ow + tile - 1) / tile;
  t.ib = g.in_block();
  t.cb = (g.c + t.ib - 1) / t.ib;
  t.block = g.block;
  t.mb = (g.m + g.block - 1) / g.block;
  return t;
}

absl::StatusOr<std::vector<te::Tensor>> compute(const Graph& graph, const Node& node,
                                                std::span<const te::Tensor> inputs, int tile) {
  if (inputs.size() < 2 || !inputs[0].defined() || !inputs[1].defined())
    return conv::compute(graph, node, inputs);
  const te::Tensor& x = inputs[0];
  const te::Tensor& w = inputs[1];
  te::Tensor b = inputs.size() > 2 ? inputs[2] : te::Tensor();
  bool f32 = true;
  for (const te::Tensor& t : {x, w, b}) f32 = f32 && (!t.defined() || t.dtype() == DType::f32);
  absl::StatusOr<conv::Geometry> geo =
      f32 ? conv::resolve(node, x.shape(), w.shape(), b.defined(), conv::compute_block(graph))
          : absl::InvalidArgumentError("");
  if (!geo.ok() || !applies(*geo)) return conv::compute(graph, node, inputs);
  const conv::Geometry& g = *geo;
  const Matrices& mx = matrices(tile);
  const Tiling t = tiling(g, tile);
  const int alpha = t.alpha;
  const int64_t block = t.block;
  const std::string& name = node.name;

  // The input padded to whole tiles, in channel blocks.
  conv::Geometry padded = g;
  padded.oh = t.th * t.m;
  padded.ow = t.tw * t.m;
  te::Tensor xp = conv::pack_data(name, padded, x, t.ib);
  // BT d BT^T in two passes: along the rows of the tile, then along its columns.
  te::Tensor rows = te::compute(
      {alpha, alpha, g.n, t.th, t.tw, t.cb, t.ib},
      [&](const std::vector<te::Var>& v) {
        return by_case(v[0], alpha, [&](int e) {
          return combine(mx.bt[e], [&](int a) {
            return xp(v[2], v[5], v[3] * t.m + a, v[4] * t.m + v[1], v[6]);
          });
        });
      },
      name + ".wino_rows", kInputRowsTag);
  // The transformed input of a channel block holds its tiles side by side, so that a GEMM step
  // broadcasts from consecutive addresses (the tiles of one block a block's channels apart).
  te::Tensor in = te::compute(
      {alpha, alpha, g.n, t.th, t.cb, t.tw, t.ib},
      [&](const std::vector<te::Var>& v) {
        return by_case(v[1], alpha, [&](int e) {
          return combine(mx.bt[e], [&](int bcol) {
            return rows(v[0], bcol, v[2], v[3], v[5], v[4], v[6]);
          });
        });
      },
      name + ".wino_input", kInputTag);
  // G g G^T, zero for the padding channels of the last blocks.
  te::Tensor u = te::compute(
      {alpha, alpha, t.mb, t.cb, t.ib, block},
      [&](const std::vector<te::Var>& v) {
        te::Expr m = v[2] * block + v[5], c = v[3] * t.ib + v[4];
        te::Expr mc = te::minimum(m, g.m - 1), cc = te::minimum(c, g.c - 1);
        te::Expr value = by_case(v[0], alpha, [&](int e1) {
          return by_case(v[1], alpha, [&](int e2) {
            return combine(mx.g[e1], [&](int i) {
              return combine(mx.g[e2], [&](int j) { return w(mc, cc, i, j); });
            });
          });
        });
        te::Expr cond;
        if (g.m % block != 0) cond = m < g.m;
        if (g.c % t.ib != 0) cond = cond.defined() ? (cond && c < g.c) : (c < g.c);
        return cond.defined() ? te::select(cond, value, 0.0f) : value;
      },
      name + ".wino_weight", kWeightTag);
  te::IterVar rc = te::reduce_axis({0, t.cb}, "rc");
  te::IterVar ri = te::reduce_axis({0, t.ib}, "ri");
  te::Tensor gemm = te::compute(
      {alpha, alpha, g.n, t.th, t.tw, t.mb, block},
      [&](const std::vector<te::Var>& v) {
        return te::sum(in(v[0], v[1], v[2], v[3], rc, v[4], ri) * u(v[0], v[1], v[5], rc, ri, v[6]),
                       {rc, ri});
      },
      name + ".wino_gemm", kGemmTag);
  // AT M AT^T for the output's position in its tile, plus the bias.
  te::Tensor out = te::compute(
      {g.n, g.m, g.oh, g.ow},
      [&](te::Var n, te::Var m, te::Var oh, te::Var ow) {
        te::Expr th = te::floordiv(oh, t.m), tw = te::floordiv(ow, t.m);
        te::Expr mb = te::floordiv(m, block), mi = te::floormod(m, block);
        te::Expr y = by_case(te::floormod(oh, t.m), t.m, [&](int r) {
          return by_case(te::floormod(ow, t.m), t.m, [&](int s) {
            return combine(mx.at[r], [&](int e1) {
              return combine(mx.at[s], [&](int e2) { return gemm(e1, e2, n, th, tw, mb, mi); });
            });
          });
        });
        return b.defined() ? y + b(m) : y;
      },
      name, kOutputTag);
  return std::vector<te::Tensor>{out};
}

TeOpDef conv_def(int tile) {
  TeOpDef def;
  def.compute = [tile](const Graph& graph, const Node& node, std::span<const te::Tensor> inputs) {
    return compute(graph, node, inputs, tile);
  };
  def.schedule = [](const AnchorGroup& g) -> absl::StatusOr<ScheduledGroup> {
    absl::StatusOr<tune::ScheduleTemplate> t = schedule_template(g);
    if (!t.ok()) return t.status();
    return t->apply(detail::knobs_for(g, *t));
  };
  return def;
}

}  // namespace collage::te_ops::winograd
