// TE compute of Resize in the nearest and linear modes, with every coordinate transformation
// mode but tf_crop_and_resize. Coordinates are computed in f32 with ONNX Runtime's formulas (as
// the reference does), per output position; linear interpolation reads 2^k taps for k resized
// axes. Axes whose scale is exactly 1 are not resampled.
#include <cmath>

#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;

Expr f32(double v) { return te::make_const(DType::f32, v); }

// The source coordinate (f32) that output position o of an axis samples. `resized` is the
// output length align_corners maps onto: scale x input length, unrounded, when scales are given
// (as ONNX and ONNX Runtime have it), the output length when sizes are.
Expr source_coordinate(const std::string& mode, Expr o, float scale, int64_t len_in,
                       int64_t len_out, float resized) {
  Expr x = te::cast(DType::f32, o);
  if (mode == "asymmetric") return x / f32(scale);
  if (mode == "pytorch_half_pixel")
    return len_out > 1 ? (x + f32(0.5)) / f32(scale) - f32(0.5) : f32(0);
  if (mode == "tf_half_pixel_for_nn") return (x + f32(0.5)) / f32(scale);
  if (mode == "align_corners")
    return len_out == 1 ? f32(0) : x * f32(static_cast<float>(len_in - 1)) / f32(resized - 1);
  return (x + f32(0.5)) / f32(scale) - f32(0.5);  // half_pixel
}

// The nearest input index (a fraction within 1e-6 of one half is a tie), clamped.
Expr nearest_index(const std::string& rounding, const Expr& x, int64_t len) {
  Expr i;
  if (rounding == "floor") {
    i = te::floor(x);
  } else if (rounding == "ceil") {
    i = te::ceil(x);
  } else {
    Expr below = te::floor(x);
    Expr tie = te::fabs(x - below - f32(0.5)) <= f32(1e-6);
    Expr tie_value = rounding == "round_prefer_ceil" ? below + f32(1) : below;
    // Not a tie: round half away from zero equals round half to even.
    i = te::select(tie, tie_value, te::round(x));
  }
  return clamp_index(te::cast(DType::i64, i), len);
}

absl::StatusOr<std::vector<te::Tensor>> resize(const Graph& g, const Node& node,
                                               std::span<const te::Tensor> in) {
  const auto& a = node.get<ResizeAttrs>();
  te::Tensor x = in[0];
  const TensorType& out = output_type(g, node);
  const bool linear = a.mode == "linear";
  if (a.mode != "nearest" && !linear)
    return node_error(node, str_cat("mode '", a.mode, "' is not supported (nearest, linear)"));
  if (a.antialias != 0 && linear) return node_error(node, "antialias is not supported");
  if (!a.axes.empty() || a.keep_aspect_ratio_policy != "stretch")
    return node_error(node, "axes and keep_aspect_ratio_policy are not supported");
  const std::string& coord = a.coordinate_transformation_mode;
  if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" &&
      coord != "asymmetric" && coord != "tf_half_pixel_for_nn")
    return node_error(node, str_cat("coordinate_transformation_mode '", coord, "' is not supported"));
  if (linear && !is_float_like(x.dtype())) return node_error(node, "linear mode needs float inputs");
  const int64_t rank = x.ndim();
  std::vector<float> scales(rank);
  for (int64_t d = 0; d < rank; ++d)
    scales[d] = a.scales.empty()
                    ? (x.shape()[d] == 0 ? 1.f
                                         : static_cast<float>(out.shape[d]) /
                                               static_cast<float>(x.shape()[d]))
                    : a.scales[d];
  const bool copy = out.shape == x.shape();
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> base(i.begin(), i.end());
        if (copy) return x(base);
        std::vector<int64_t> resized;
        std::vector<Expr> lo(rank), hi(rank), w_lo(rank), w_hi(rank);
        for (int64_t d = 0; d < rank; ++d) {
          if (scales[d] == 1.f) continue;
          const int64_t len = x.shape()[d];
          const float mapped = a.scales.empty() ? static_cast<float>(out.shape[d])
                                                 : scales[d] * static_cast<float>(len);
          Expr c = source_coordinate(coord, i[d], scales[d], len, out.shape[d], mapped);
          if (!linear) {
            base[d] = nearest_index(a.nearest_mode, c, len);
            continue;
          }
          Expr xc = te::maximum(f32(0), te::minimum(c, f32(static_cast<float>(len - 1))));
          Expr x1 = te::minimum(te::cast(DType::i64, xc), len - 1);
          Expr x2 = te::minimum(x1 + int64_t{1}, len - 1);
          lo[d] = x1;
          hi[d] = x2;
          // When x1 == x2 both weights read the same element and sum to 1 - 0 + 0 (see below).
          w_lo[d] = te::select(x1 == x2, f32(1), te::fabs(xc - te::cast(DType::f32, x2)));
          w_hi[d] = te::select(x1 == x2, f32(0), te::fabs(xc - te::cast(DType::f32, x1)));
          resized.push_back(d);
        }
        if (!linear) return x(base);
        Expr sum;
        for (int64_t m = 0; m < (int64_t{1} << resized.size()); ++m) {
          std::vector<Expr> idx = base;
          Expr w = f32(1);
          for (size_t k = 0; k < resized.size(); ++k) {
            const int64_t d = resized[k];
            const bool high = (m >> k) & 1;
            idx[d] = high ? hi[d] : lo[d];
            w = w * (high ? w_hi[d] : w_lo[d]);
          }
          Expr term = w * cast_to(DType::f32, x(idx));
          sum = sum.defined() ? sum + term : term;
        }
        return cast_to(out.dtype, sum);
      },
      tensor_name(node))};
}

}  // namespace

void register_resize_op(TeOpRegistry& r) {
  r.add("Resize", {resize, nullptr});
}

}  // namespace collage::te_ops
