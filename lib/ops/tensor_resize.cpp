// Resize: nearest, n-linear and cubic resampling with the ONNX coordinate transformation modes.
// The arithmetic follows ONNX Runtime's CPU kernel (coordinates in f32, the same rounding rules,
// axes with scale 1 left alone) so that results agree with it to rounding.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

enum class Interp { nearest, linear, cubic };
enum class Coord {
  half_pixel,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nn,
  tf_crop_and_resize
};
enum class Rounding { round_prefer_floor, round_prefer_ceil, floor, ceil };

struct ResizePlan {
  Interp interp;
  Coord coord;
  Rounding rounding;
  Shape out;
  std::vector<float> scales;  // per axis: as given, or output / input size when sizes are given
  // Per axis, the output length align_corners maps onto: scale x input size, unrounded, when
  // scales are given (as ONNX and ONNX Runtime have it), the output size when sizes are.
  std::vector<float> resized;
  std::vector<float> roi;     // [starts..., ends...], only used by tf_crop_and_resize
};

absl::StatusOr<ResizePlan> plan_resize(const ResizeAttrs& a, const TensorType& in) {
  ResizePlan p;
  if (a.mode == "nearest") {
    p.interp = Interp::nearest;
  } else if (a.mode == "linear") {
    p.interp = Interp::linear;
  } else if (a.mode == "cubic") {
    p.interp = Interp::cubic;
  } else {
    return absl::InvalidArgumentError(
        str_cat("unknown mode '", a.mode, "' (expected nearest, linear or cubic)"));
  }
  const std::string& c = a.coordinate_transformation_mode;
  if (c == "half_pixel") {
    p.coord = Coord::half_pixel;
  } else if (c == "pytorch_half_pixel") {
    p.coord = Coord::pytorch_half_pixel;
  } else if (c == "align_corners") {
    p.coord = Coord::align_corners;
  } else if (c == "asymmetric") {
    p.coord = Coord::asymmetric;
  } else if (c == "tf_half_pixel_for_nn") {
    p.coord = Coord::tf_half_pixel_for_nn;
  } else if (c == "tf_crop_and_resize") {
    p.coord = Coord::tf_crop_and_resize;
  } else {
    return absl::InvalidArgumentError(str_cat("unknown coordinate_transformation_mode '", c, "'"));
  }
  const std::string& n = a.nearest_mode;
  if (n == "round_prefer_floor") {
    p.rounding = Rounding::round_prefer_floor;
  } else if (n == "round_prefer_ceil") {
    p.rounding = Rounding::round_prefer_ceil;
  } else if (n == "floor") {
    p.rounding = Rounding::floor;
  } else if (n == "ceil") {
    p.rounding = Rounding::ceil;
  } else {
    return absl::InvalidArgumentError(str_cat("unknown nearest_mode '", n, "'"));
  }
  if (a.antialias != 0 && a.antialias != 1)
    return absl::InvalidArgumentError(str_cat("antialias ", a.antialias, " must be 0 or 1"));
  if (p.interp != Interp::nearest && in.dtype == DType::boolean)
    return absl::InvalidArgumentError(str_cat("mode '", a.mode, "' cannot interpolate bool"));

  const size_t rank = in.shape.size();
  if (rank == 0) return absl::InvalidArgumentError("the input must have rank >= 1, got a scalar");
  if (a.scales.empty() == a.sizes.empty())
    return absl::InvalidArgumentError(str_cat("exactly one of scales and sizes must be given (",
                                              a.scales.size(), " scales, ", a.sizes.size(),
                                              " sizes)"));
  const size_t given = a.scales.empty() ? a.sizes.size() : a.scales.size();
  if (given != rank)
    return absl::InvalidArgumentError(str_cat(a.scales.empty() ? "sizes" : "scales", " has ", given,
                                              " entries, but the input ", shape_to_string(in.shape),
                                              " has rank ", rank));
  p.out.resize(rank);
  p.scales.resize(rank);
  p.resized.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = in.shape[d];
    if (!a.scales.empty()) {
      const float s = a.scales[d];
      if (!(s > 0))
        return absl::InvalidArgumentError(
            str_cat("scale ", static_cast<double>(s), " for axis ", d, " must be > 0"));
      const float size = s * static_cast<float>(dim);
      if (!(size < 1e15f))
        return absl::InvalidArgumentError(
            str_cat("scale ", static_cast<double>(s), " makes axis ", d, " too large"));
      p.scales[d] = s;
      p.resized[d] = size;
      p.out[d] = static_cast<int64_t>(size);
    } else {
      const int64_t size = a.sizes[d];
      if (size < 0 || (dim == 0 && size != 0))
        return absl::InvalidArgumentError(
            str_cat("size ", size, " for axis ", d, " of size ", dim, " is invalid"));
      p.scales[d] = dim == 0 ? 1.f : static_cast<float>(size) / static_cast<float>(dim);
      p.out[d] = size;
      p.resized[d] = static_cast<float>(size);
    }
  }
  if (p.coord == Coord::tf_crop_and_resize) {
    if (a.roi.empty()) {
      p.roi.assign(rank, 0.f);
      p.roi.resize(2 * rank, 1.f);
    } else if (a.roi.size() != 2 * rank) {
      return absl::InvalidArgumentError(
          str_cat("roi has ", a.roi.size(), " entries, expected 2 * rank = ", 2 * rank));
    } else {
      p.roi = a.roi;
    }
  }
  return p;
}

absl::Status infer_resize(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  auto p = plan_resize(ctx.attrs<ResizeAttrs>(), in);
  if (!p.ok()) return ctx.error(std::string(p.status().message()));
  ctx.set_output(0, {in.dtype, p->out});
  return absl::OkStatus();
}

// The input coordinate that output position x of axis d samples (ONNX Runtime's f32 formulas).
float source_coordinate(const ResizePlan& p, size_t d, float x, float len_in) {
  const float scale = p.scales[d];
  const auto len_out = static_cast<float>(p.out[d]);
  if (scale == 1.f) return x;
  switch (p.coord) {
    case Coord::asymmetric:
      return x / scale;
    case Coord::pytorch_half_pixel:
      return len_out > 1 ? (x + 0.5f) / scale - 0.5f : 0.f;
    case Coord::tf_half_pixel_for_nn:
      return (x + 0.5f) / scale;
    case Coord::align_corners:
      return len_out == 1 ? 0.f : x * (len_in - 1) / (p.resized[d] - 1);
    case Coord::tf_crop_and_resize: {
      const float start = p.roi[d], end = p.roi[d + p.out.size()];
      if (len_out > 1)
        return start * (len_in - 1) + (x * (end - start) * (len_in - 1)) / (len_out - 1);
      return static_cast<float>(0.5 * (start + end) * (len_in - 1));
    }
    case Coord::half_pixel:
      break;
  }
  return ((x + 0.5f) / scale) - 0.5f;
}

// A fraction within 1e-6 of one half counts as a tie, as in ONNX Runtime, so that coordinates such
// as 2 / (4 / 7.f) = 3.4999998 round like the exact 3.5 they stand for.
int64_t nearest_index(Rounding r, float x) {
  switch (r) {
    case Rounding::round_prefer_floor:
    case Rounding::round_prefer_ceil: {
      const float below = std::floor(x);
      if (std::fabs(x - below - 0.5f) <= 1e-6f)
        return static_cast<int64_t>(below) + (r == Rounding::round_prefer_ceil ? 1 : 0);
      return static_cast<int64_t>(std::round(x));
    }
    case Rounding::floor:
      return static_cast<int64_t>(std::floor(x));
    case Rounding::ceil:
      return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

// Whether a source coordinate lies outside an axis of length len_in (only tf_crop_and_resize
// extrapolates).
bool extrapolates(const ResizePlan& p, float coord, int64_t len_in) {
  return p.coord == Coord::tf_crop_and_resize &&
         (coord < 0 || coord > static_cast<float>(len_in - 1));
}

absl::Status resize_nearest(const ResizePlan& p, const ResizeAttrs& a, const Tensor& in,
                            Tensor& out) {
  const std::vector<int64_t> strides = shape_strides(in.shape());
  std::vector<std::vector<int64_t>> tables(p.out.size());
  for (size_t d = 0; d < tables.size(); ++d) {
    const int64_t len = in.shape()[d];
    tables[d].resize(static_cast<size_t>(p.out[d]));
    for (int64_t o = 0; o < p.out[d]; ++o) {
      const float x = source_coordinate(p, d, static_cast<float>(o), static_cast<float>(len));
      if (extrapolates(p, x, len)) {
        tables[d][o] = -1;
        continue;
      }
      const int64_t i = std::clamp<int64_t>(nearest_index(p.rounding, x), 0, len - 1);
      tables[d][o] = i * strides[d];
    }
  }
  unsigned char fill[8];
  store_float_as(a.extrapolation_value, in.dtype(), fill);
  gather_by_axis(dtype_size(in.dtype()), out.raw(), in.raw(), tables, fill);
  return absl::OkStatus();
}

// The input positions and weights one output position of an axis reads.
struct Taps {
  std::vector<int64_t> index;
  std::vector<float> weight;
};

Taps linear_taps(float x, int64_t len) {
  const float xc = std::max(0.f, std::min(x, static_cast<float>(len - 1)));
  const int64_t x1 = std::min(static_cast<int64_t>(xc), len - 1);
  const int64_t x2 = std::min(x1 + 1, len - 1);
  if (x1 == x2) return {{x1}, {1.f}};
  return {{x1, x2},
          {std::fabs(xc - static_cast<float>(x2)), std::fabs(xc - static_cast<float>(x1))}};
}

Taps cubic_taps(float x, int64_t len, float a, bool exclude_outside) {
  const float base = std::floor(x);
  const float s = std::fabs(x - base);
  const float c[4] = {
      ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a,
      ((a + 2) * s - (a + 3)) * s * s + 1,
      ((a + 2) * (1 - s) - (a + 3)) * (1 - s) * (1 - s) + 1,
      ((a * (2 - s) - 5 * a) * (2 - s) + 8 * a) * (2 - s) - 4 * a,
  };
  Taps t;
  float sum = 0;
  for (int k = 0; k < 4; ++k) {
    const int64_t i = static_cast<int64_t>(base) - 1 + k;
    const bool inside = i >= 0 && i < len;
    const float w = exclude_outside && !inside ? 0.f : c[k];
    t.index.push_back(std::clamp<int64_t>(i, 0, len - 1));
    t.weight.push_back(w);
    sum += w;
  }
  if (exclude_outside)
    for (float& w : t.weight) w /= sum;
  return t;
}

// Antialiased taps of a downsampling axis (scale < 1), as ONNX defines them: the filter (linear:
// a triangle, cubic: Keys' kernel) is stretched by 1 / scale, its weights taken at the distances
// to the n input positions nearest x (ties to the lower, positions past the edges clamped to
// them) and normalised. With exclude_outside the positions past the edges weigh nothing.
Taps antialias_taps(bool cubic, float x, int64_t len, float scale, float a, bool exclude_outside) {
  const double xs = x;
  const double ratio = xs == std::floor(xs) ? 1.0 : xs - std::floor(xs);
  const auto start = static_cast<int64_t>(std::floor((cubic ? -2.0 : -1.0) / scale) + 1);
  const int64_t n = 2 - 2 * start;
  auto filter = [&](double d) {
    d = std::fabs(d);
    if (!cubic) return std::clamp(1.0 - d, 0.0, 1.0);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  std::vector<double> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[i] = filter(scale * (static_cast<double>(start + i) - ratio));
  // The n positions nearest x on the axis padded by ceil(n / 2) edge copies on each side.
  const int64_t pad = (n + 1) / 2, limit = len + 2 * pad;
  const double y = xs + static_cast<double>(pad);
  std::vector<int64_t> cand;
  for (int64_t i = static_cast<int64_t>(std::floor(y)) - n; i <= static_cast<int64_t>(std::floor(y)) + n; ++i)
    if (i >= 0 && i < limit) cand.push_back(i);
  std::sort(cand.begin(), cand.end(), [&](int64_t l, int64_t r) {
    const double dl = std::fabs(y - static_cast<double>(l)), dr = std::fabs(y - static_cast<double>(r));
    return dl != dr ? dl < dr : l < r;
  });
  cand.resize(std::min<size_t>(cand.size(), static_cast<size_t>(n)));
  std::sort(cand.begin(), cand.end());
  Taps t;
  double sum = 0;
  for (size_t k = 0; k < cand.size(); ++k) {
    const int64_t i = cand[k] - pad;
    const double wk = exclude_outside && (i < 0 || i >= len) ? 0.0 : w[k];
    t.index.push_back(std::clamp<int64_t>(i, 0, len - 1));
    t.weight.push_back(static_cast<float>(wk));
    sum += wk;
  }
  if (sum != 0)
    for (float& v : t.weight) v = static_cast<float>(v / sum);
  return t;
}

// Resamples axis d of the dense f32 buffer `src` (shape `shape`) into `dst`; `shape` is updated.
void resample_axis(const std::vector<Taps>& taps, size_t d, Shape& shape, const float* src,
                   float* dst) {
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) outer *= shape[k];
  for (size_t k = d + 1; k < shape.size(); ++k) inner *= shape[k];
  const int64_t len_in = shape[d], len_out = static_cast<int64_t>(taps.size());
  for (int64_t o1 = 0; o1 < outer; ++o1) {
    for (int64_t o = 0; o < len_out; ++o) {
      float* row = dst + (o1 * len_out + o) * inner;
      std::fill(row, row + inner, 0.f);
      const Taps& t = taps[o];
      for (size_t k = 0; k < t.index.size(); ++k) {
        const float w = t.weight[k];
        const float* in = src + (o1 * len_in + t.index[k]) * inner;
        for (int64_t i = 0; i < inner; ++i) row[i] += w * in[i];
      }
    }
  }
  shape[d] = len_out;
}

absl::Status resize_interpolate(const ResizePlan& p, const ResizeAttrs& a, const Tensor& in,
                                Tensor& out) {
  Shape shape = in.shape();
  std::vector<float> cur(static_cast<size_t>(in.numel())), next;
  for (int64_t i = 0; i < in.numel(); ++i) cur[i] = static_cast<float>(in.get_as_double(i));
  const size_t rank = shape.size();
  std::vector<std::vector<char>> outside(rank);
  bool any_outside = false;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t len = in.shape()[d];
    outside[d].assign(static_cast<size_t>(p.out[d]), 0);
    if (p.scales[d] == 1.f) continue;
    std::vector<Taps> taps(static_cast<size_t>(p.out[d]));
    for (int64_t o = 0; o < p.out[d]; ++o) {
      const float x = source_coordinate(p, d, static_cast<float>(o), static_cast<float>(len));
      outside[d][o] = extrapolates(p, x, len);
      any_outside |= outside[d][o] != 0;
      if (a.antialias != 0 && p.scales[d] < 1.f)
        taps[o] = antialias_taps(p.interp == Interp::cubic, x, len, p.scales[d], a.cubic_coeff_a,
                                 a.exclude_outside != 0);
      else
        taps[o] = p.interp == Interp::linear
                      ? linear_taps(x, len)
                      : cubic_taps(x, len, a.cubic_coeff_a, a.exclude_outside != 0);
    }
    Shape resized = shape;
    resized[d] = p.out[d];
    next.assign(static_cast<size_t>(shape_numel(resized)), 0.f);
    resample_axis(taps, d, shape, cur.data(), next.data());
    cur.swap(next);
  }
  if (any_outside) {
    std::vector<int64_t> idx(rank, 0);
    for (float& v : cur) {
      bool o = false;
      for (size_t d = 0; d < rank; ++d) o |= outside[d][idx[d]] != 0;
      if (o) v = a.extrapolation_value;
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < p.out[d]) break;
        idx[d] = 0;
      }
    }
  }
  const DType t = out.dtype();
  const size_t esize = dtype_size(t);
  auto* o = static_cast<unsigned char*>(out.raw());
  for (size_t i = 0; i < cur.size(); ++i) store_float_as(cur[i], t, o + i * esize);
  return absl::OkStatus();
}

absl::Status run_resize(const KernelArgs& k) {
  const auto& a = k.get<ResizeAttrs>();
  const Tensor& in = k.inputs[0];
  Tensor& out = k.outputs[0];
  auto p = plan_resize(a, in.type());
  if (!p.ok()) return p.status();
  if (out.numel() == 0) return absl::OkStatus();
  if (p->out == in.shape()) {
    std::memcpy(out.raw(), in.raw(), in.bytes());
    return absl::OkStatus();
  }
  if (p->interp == Interp::nearest) return resize_nearest(*p, a, in, out);
  return resize_interpolate(*p, a, in, out);
}

}  // namespace

void register_resize_op(OpRegistry& r) {
  add_tensor_op(
      r, make_op<ResizeAttrs>("Resize", FusionKind::injective, 1, 1, infer_resize, run_resize));
}

}  // namespace collage::ops
