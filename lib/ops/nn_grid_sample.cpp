// GridSample (ONNX 16 and 20-22, any number of spatial axes) in the reference executor, computed
// in double: a tensor product of per-axis taps (1 nearest, 2 linear, 4 cubic), each tap's index
// resolved by the padding mode.
#include <cmath>

#include "collage/ops/sampling.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

absl::Status infer_grid_sample(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 1, kFloatTypes); !s.ok()) return s;
  const auto& a = ctx.attrs<GridSampleAttrs>();
  if (a.mode != "linear" && a.mode != "nearest" && a.mode != "cubic")
    return ctx.error(str_cat("mode '", a.mode, "' is not linear, nearest or cubic"));
  if (a.padding_mode != "zeros" && a.padding_mode != "border" && a.padding_mode != "reflection")
    return ctx.error(str_cat("padding_mode '", a.padding_mode,
                             "' is not zeros, border or reflection"));
  const Shape& x = ctx.input(0).shape;
  const Shape& g = ctx.input(1).shape;
  const size_t r = x.size() < 3 ? 0 : x.size() - 2;
  if (r == 0 || g.size() != r + 2 || g[0] != x[0] || g.back() != static_cast<int64_t>(r))
    return ctx.error(str_cat("grid has shape ", shape_to_string(g), "; for X ", shape_to_string(x),
                             " it must be [N, spatial..., ", r, "]"));
  Shape out = {x[0], x[1]};
  out.insert(out.end(), g.begin() + 1, g.end() - 1);
  ctx.set_output(0, {ctx.input(0).dtype, out});
  return absl::OkStatus();
}

// Mirrors v into [lo, hi] (repeatedly, as ONNX's definition does).
double reflect(double v, double lo, double hi) {
  const double range = hi - lo;
  if (v < lo) {
    const double d = lo - v;
    const auto n = static_cast<int64_t>(d / range);
    const double rest = d - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + rest : hi - rest;
  }
  if (v > hi) {
    const double d = v - hi;
    const auto n = static_cast<int64_t>(d / range);
    const double rest = d - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - rest : lo + rest;
  }
  return v;
}

void cubic_weights(double t, double w[4]) {
  constexpr double a = -0.75;
  auto near = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  w[0] = far(t + 1), w[1] = near(t), w[2] = near(1 - t), w[3] = far(2 - t);
}

absl::Status grid_sample_kernel(const KernelArgs& args) {
  const auto& a = args.get<GridSampleAttrs>();
  const Tensor& x = args.inputs[0];
  const Tensor& grid = args.inputs[1];
  Tensor& y = args.outputs[0];
  const Shape& xs = x.shape();
  const int64_t r = x.rank() - 2, N = xs[0], C = xs[1];
  const bool align = a.align_corners != 0;
  const int taps = a.mode == "nearest" ? 1 : a.mode == "linear" ? 2 : 4;
  const Shape spatial(xs.begin() + 2, xs.end());
  const auto xstride = shape_strides(spatial);
  const int64_t plane = shape_numel(spatial);
  const int64_t points = N ? grid.numel() / (N * r) : 0;
  std::vector<double> out(static_cast<size_t>(y.numel()));
  std::vector<double> lo(r), hi(r);
  for (int64_t i = 0; i < r; ++i) {
    lo[i] = align ? 0.0 : -0.5;
    hi[i] = align ? spatial[i] - 1.0 : spatial[i] - 0.5;
  }
  // Per axis: the taps' indices (-1: outside, zero padding) and weights.
  std::vector<std::array<int64_t, 4>> index(r);
  std::vector<std::array<double, 4>> weight(r);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < points; ++p) {
      for (int64_t i = 0; i < r; ++i) {
        // The grid's last axis lists coordinates innermost (x) first.
        const double g = grid.get_as_double((n * points + p) * r + (r - 1 - i));
        const int64_t len = spatial[i];
        double v = static_cast<float>(align ? (g + 1) / 2.0 * (len - 1) : ((g + 1) * len - 1) / 2.0);
        if (a.mode == "nearest") v = std::nearbyint(v);
        if (v < lo[i] || v > hi[i]) {
          if (a.padding_mode == "border") v = std::clamp(v, 0.0, len - 1.0);
          else if (a.padding_mode == "reflection") v = reflect(v, lo[i], hi[i]);
        }
        const double base = a.mode == "nearest" ? v : std::floor(v);
        const double t = v - base;
        double w[4] = {1, 0, 0, 0};
        if (taps == 2) w[0] = 1 - t, w[1] = t;
        if (taps == 4) cubic_weights(t, w);
        for (int k = 0; k < taps; ++k) {
          int64_t at = static_cast<int64_t>(base) + k - (taps == 4 ? 1 : 0);
          if (a.padding_mode == "border") {
            at = std::clamp<int64_t>(at, 0, len - 1);
          } else if (a.padding_mode == "reflection") {
            at = static_cast<int64_t>(reflect(static_cast<double>(at), lo[i], hi[i]));
          } else if (at < 0 || at >= len) {
            at = -1;
          }
          index[i][k] = at;
          weight[i][k] = w[k];
        }
      }
      for (int64_t c = 0; c < C; ++c) {
        double sum = 0;
        std::vector<int> k(r, 0);
        for (;;) {
          double w = 1;
          int64_t off = 0;
          bool inside = true;
          for (int64_t i = 0; i < r; ++i) {
            w *= weight[i][k[i]];
            inside = inside && index[i][k[i]] >= 0;
            off += index[i][k[i]] * xstride[i];
          }
          if (inside) sum += w * x.get_as_double((n * C + c) * plane + off);
          int64_t i = r - 1;
          while (i >= 0 && ++k[i] == taps) k[i--] = 0;
          if (i < 0) break;
        }
        out[(n * C + c) * points + p] = sum;
      }
    }
  return dispatch_codec<kFloatTypes>(y.dtype(), [&](auto codec) {
    using Cd = decltype(codec);
    auto* py = y.data<typename Cd::Storage>();
    for (size_t i = 0; i < out.size(); ++i)
      py[i] = Cd::store(static_cast<typename Cd::Compute>(out[i]));
  });
}

}  // namespace

void register_grid_sample_op(OpRegistry& r) {
  add_builtin_op(r, make_op<GridSampleAttrs>("GridSample", FusionKind::opaque, 2, 2,
                                             infer_grid_sample, grid_sample_kernel));
}

}  // namespace collage::ops
