// TE compute of GridSample (ONNX 16 and 20-22; lib/ops/nn_grid_sample.cpp defines it), in f32,
// any number of spatial axes: per axis the sampling coordinate, its taps (1 nearest, 2 linear,
// 4 cubic) and their indices resolved by the padding mode; the output is the tensor product of
// the taps' weights applied to X (a zero-padded tap reads 0).
#include <functional>

#include "collage/ops/sampling.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Expr f32(double v) { return te::make_const(DType::f32, v); }

// Mirrors v into [lo, hi] as often as needed, as ONNX's definition does.
Expr reflect(const Expr& v, double lo, double hi) {
  const double range = hi - lo;
  auto fold = [&](const Expr& d, const Expr& even, const Expr& odd_base, bool from_lo) {
    Expr n = te::floor(d / f32(range));
    Expr rest = d - n * f32(range);
    Expr odd = n - te::floor(n / f32(2)) * f32(2);
    Expr e = from_lo ? even + rest : even - rest;
    Expr o = from_lo ? odd_base - rest : odd_base + rest;
    return te::select(odd == f32(0), e, o);
  };
  Expr below = fold(f32(lo) - v, f32(lo), f32(hi), true);
  Expr above = fold(v - f32(hi), f32(hi), f32(lo), false);
  return te::select(v < f32(lo), below, te::select(v > f32(hi), above, v));
}

// Keys' cubic convolution weights (A = -0.75) of the four taps around t in [0, 1).
std::array<Expr, 4> cubic_weights(const Expr& t) {
  const double a = -0.75;
  auto near = [&](Expr x) { return (f32(a + 2) * x - f32(a + 3)) * x * x + f32(1); };
  auto far = [&](Expr x) { return ((f32(a) * x - f32(5 * a)) * x + f32(8 * a)) * x - f32(4 * a); };
  return {far(t + f32(1)), near(t), near(f32(1) - t), far(f32(2) - t)};
}

Outputs grid_sample(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<GridSampleAttrs>();
  te::Tensor x = in[0], grid = in[1];
  if (!is_float_like(x.dtype()) || !is_float_like(grid.dtype()))
    return node_error(node, "only float inputs are supported");
  const int64_t r = x.ndim() - 2;
  if (r < 1) return node_error(node, "input rank must be at least 3");
  const bool align = a.align_corners != 0;
  const int taps = a.mode == "nearest" ? 1 : a.mode == "linear" ? 2 : 4;
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        // Per spatial axis: each tap's index (clamped into range), whether it lies inside, and
        // its weight.
        std::vector<std::vector<Expr>> index(r), inside(r), weight(r);
        for (int64_t ax = 0; ax < r; ++ax) {
          const int64_t len = x.shape()[2 + ax];
          const double lo = align ? 0.0 : -0.5, hi = align ? len - 1.0 : len - 0.5;
          std::vector<Expr> gi = {i[0]};
          for (int64_t k = 0; k < r; ++k) gi.push_back(i[2 + k]);
          gi.push_back(Expr(r - 1 - ax));  // coordinates listed innermost axis first
          Expr gv = cast_to(DType::f32, grid(gi));
          Expr v = align ? (gv + f32(1)) / f32(2) * f32(len - 1)
                         : ((gv + f32(1)) * f32(len) - f32(1)) / f32(2);
          if (taps == 1) v = te::round(v);
          if (a.padding_mode == "border")
            v = te::select(v < f32(lo) || v > f32(hi),
                           te::minimum(te::maximum(v, f32(0)), f32(len - 1)), v);
          else if (a.padding_mode == "reflection")
            v = reflect(v, lo, hi);
          Expr base = taps == 1 ? v : te::floor(v);
          Expr t = v - base;
          std::vector<Expr> w;
          if (taps == 1) w = {f32(1)};
          if (taps == 2) w = {f32(1) - t, t};
          if (taps == 4) {
            auto c = cubic_weights(t);
            w.assign(c.begin(), c.end());
          }
          for (int k = 0; k < taps; ++k) {
            Expr at = base + f32(k - (taps == 4 ? 1 : 0));
            Expr ok = Expr(true);
            if (a.padding_mode == "border")
              at = te::minimum(te::maximum(at, f32(0)), f32(len - 1));
            else if (a.padding_mode == "reflection")
              at = reflect(at, lo, hi);
            else
              ok = at >= f32(0) && at <= f32(len - 1);
            index[ax].push_back(clamp_index(cast_to(DType::i64, at), len));
            inside[ax].push_back(ok);
            weight[ax].push_back(w[k]);
          }
        }
        // The sum over every combination of taps.
        Expr sum = f32(0);
        std::vector<int> k(r, 0);
        for (;;) {
          std::vector<Expr> xi = {i[0], i[1]};
          Expr w = f32(1), ok = Expr(true);
          for (int64_t ax = 0; ax < r; ++ax) {
            xi.push_back(index[ax][k[ax]]);
            w = w * weight[ax][k[ax]];
            ok = ok && inside[ax][k[ax]];
          }
          sum = sum + te::select(ok, w * cast_to(DType::f32, x(xi)), f32(0));
          int64_t ax = r - 1;
          while (ax >= 0 && ++k[ax] == taps) k[ax--] = 0;
          if (ax < 0) break;
        }
        return cast_to(out.dtype, sum);
      },
      tensor_name(node))};
}

}  // namespace

void register_grid_sample_op(TeOpRegistry& r) { r.add("GridSample", {grid_sample, nullptr}); }

}  // namespace collage::te_ops
