// Resize planning and resampling (dyn_resize.h).
#include "dyn_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace collage::rt_dynamic {
namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string shape_text(const std::vector<int64_t>& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// roi, scales and sizes over every axis: as given, or spread from `axes` (the other axes keep
// scale 1, their size and the whole roi); `resized_axes` gets the axes they were given for.
std::string spread(const ResizeSpec& a, const std::vector<int64_t>& in, ResizeSpec* full,
                   std::vector<size_t>* resized_axes) {
  const size_t rank = in.size();
  if (a.axes.empty()) {
    for (size_t d = 0; d < rank; ++d) resized_axes->push_back(d);
  } else {
    std::vector<bool> seen(rank, false);
    for (int64_t x : a.axes) {
      const auto r = static_cast<int64_t>(rank);
      if (x < -r || x >= r)
        return "axis " + std::to_string(x) + " is out of range for rank " + std::to_string(rank);
      const auto d = static_cast<size_t>(x < 0 ? x + r : x);
      if (seen[d]) return "axis " + std::to_string(x) + " is listed twice";
      seen[d] = true;
      resized_axes->push_back(d);
    }
  }
  const size_t k = resized_axes->size();
  const std::string what = a.axes.empty()
                               ? "the input " + shape_text(in) + " has rank " + std::to_string(rank)
                               : "axes " + list_text(a.axes) + " has " + std::to_string(k);
  if (!a.scales.empty() && a.scales.size() != k)
    return "scales has " + std::to_string(a.scales.size()) + " entries, but " + what;
  if (!a.sizes.empty() && a.sizes.size() != k)
    return "sizes has " + std::to_string(a.sizes.size()) + " entries, but " + what;
  if (!a.roi.empty() && a.roi.size() != 2 * k)
    return "roi has " + std::to_string(a.roi.size()) + " entries, expected twice as many as " +
           what;
  *full = a;
  if (!a.scales.empty()) full->scales.assign(rank, 1.f);
  if (!a.sizes.empty()) full->sizes.assign(in.begin(), in.end());
  if (!a.roi.empty()) {
    full->roi.assign(rank, 0.f);
    full->roi.resize(2 * rank, 1.f);
  }
  for (size_t i = 0; i < k; ++i) {
    const size_t d = (*resized_axes)[i];
    if (!a.scales.empty()) full->scales[d] = a.scales[i];
    if (!a.sizes.empty()) full->sizes[d] = a.sizes[i];
    if (!a.roi.empty()) {
      full->roi[d] = a.roi[i];
      full->roi[rank + d] = a.roi[k + i];
    }
  }
  return "";
}

// The input coordinate that output position x of axis d samples (ONNX Runtime's f32 formulas).
float source_coordinate(const ResizePlan& p, ResizeCoord coord, size_t d, float x, float len_in) {
  const float scale = p.scales[d];
  const auto len_out = static_cast<float>(p.out[d]);
  if (scale == 1.f) return x;
  switch (coord) {
    case ResizeCoord::asymmetric:
      return x / scale;
    case ResizeCoord::pytorch_half_pixel:
      return len_out > 1 ? (x + 0.5f) / scale - 0.5f : 0.f;
    case ResizeCoord::tf_half_pixel_for_nn:
      return (x + 0.5f) / scale;
    case ResizeCoord::align_corners:
      return len_out == 1 ? 0.f : x * (len_in - 1) / (p.resized[d] - 1);
    case ResizeCoord::tf_crop_and_resize: {
      const float start = p.roi[d], end = p.roi[d + p.out.size()];
      if (len_out > 1)
        return start * (len_in - 1) + (x * (end - start) * (len_in - 1)) / (len_out - 1);
      return static_cast<float>(0.5 * (start + end) * (len_in - 1));
    }
    case ResizeCoord::half_pixel_symmetric: {
      // ONNX: the centre of the input maps to the centre of the output when the output length
      // was rounded from scale x input.
      const float adjustment = len_out / p.resized[d];
      const float offset = len_in / 2 * (1 - adjustment);
      return offset + (x + 0.5f) / scale - 0.5f;
    }
    case ResizeCoord::half_pixel:
      break;
  }
  return ((x + 0.5f) / scale) - 0.5f;
}

// A fraction within 1e-6 of one half counts as a tie, as in ONNX Runtime, so that coordinates such
// as 2 / (4 / 7.f) = 3.4999998 round like the exact 3.5 they stand for.
int64_t nearest_index(ResizeRounding r, float x) {
  switch (r) {
    case ResizeRounding::round_prefer_floor:
    case ResizeRounding::round_prefer_ceil: {
      const float below = std::floor(x);
      if (std::fabs(x - below - 0.5f) <= 1e-6f)
        return static_cast<int64_t>(below) + (r == ResizeRounding::round_prefer_ceil ? 1 : 0);
      return static_cast<int64_t>(std::round(x));
    }
    case ResizeRounding::floor:
      return static_cast<int64_t>(std::floor(x));
    case ResizeRounding::ceil:
      return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

// Whether a source coordinate lies outside an axis of length len_in (only tf_crop_and_resize
// extrapolates).
bool extrapolates(ResizeCoord coord, float c, int64_t len_in) {
  return coord == ResizeCoord::tf_crop_and_resize && (c < 0 || c > static_cast<float>(len_in - 1));
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
  for (int64_t i = static_cast<int64_t>(std::floor(y)) - n;
       i <= static_cast<int64_t>(std::floor(y)) + n; ++i)
    if (i >= 0 && i < limit) cand.push_back(i);
  std::sort(cand.begin(), cand.end(), [&](int64_t l, int64_t r) {
    const double dl = std::fabs(y - static_cast<double>(l));
    const double dr = std::fabs(y - static_cast<double>(r));
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

// Resamples axis d of the dense buffer `src` (shape `shape`) into `dst`; `shape` is updated.
void resample_axis(const std::vector<Taps>& taps, size_t d, std::vector<int64_t>& shape,
                   const float* src, float* dst) {
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

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

std::string plan_resize(const ResizeSpec& a, const std::vector<int64_t>& in, ResizePlan* plan) {
  const size_t rank = in.size();
  if (rank == 0) return "the input must have rank >= 1, got a scalar";
  if (a.scales.empty() == a.sizes.empty())
    return "exactly one of scales and sizes must be given (" + std::to_string(a.scales.size()) +
           " scales, " + std::to_string(a.sizes.size()) + " sizes)";
  ResizeSpec full;
  std::vector<size_t> resized_axes;
  if (std::string e = spread(a, in, &full, &resized_axes); !e.empty()) return e;
  ResizePlan& p = *plan;
  p.out.assign(rank, 0);
  p.scales.assign(rank, 1.f);
  p.resized.assign(rank, 0.f);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = in[d];
    if (!full.scales.empty()) {
      const float s = full.scales[d];
      if (!(s > 0)) return "scale " + num(s) + " for axis " + std::to_string(d) + " must be > 0";
      const float size = s * static_cast<float>(dim);
      if (!(size < 1e15f))
        return "scale " + num(s) + " makes axis " + std::to_string(d) + " too large";
      p.scales[d] = s;
      p.resized[d] = size;
      p.out[d] = static_cast<int64_t>(size);
    } else {
      const int64_t size = full.sizes[d];
      if (size < 0 || (dim == 0 && size != 0))
        return "size " + std::to_string(size) + " for axis " + std::to_string(d) + " of size " +
               std::to_string(dim) + " is invalid";
      p.scales[d] = dim == 0 ? 1.f : static_cast<float>(size) / static_cast<float>(dim);
      p.out[d] = size;
      p.resized[d] = static_cast<float>(size);
    }
  }
  if (!full.sizes.empty() && a.keep != ResizeKeepAspect::stretch) {
    // One scale for the listed axes, the smallest or largest of sizes / input, as ONNX's
    // reference computes it (in double, the sizes rounded half up; align_corners and
    // half_pixel_symmetric map onto the unrounded scale x input).
    const bool larger = a.keep == ResizeKeepAspect::not_smaller;
    double scale = larger ? 0.0 : HUGE_VAL;
    for (size_t d : resized_axes) {
      if (in[d] == 0) continue;
      const double s = static_cast<double>(full.sizes[d]) / static_cast<double>(in[d]);
      scale = larger ? std::max(scale, s) : std::min(scale, s);
    }
    if (std::isfinite(scale) && scale > 0)
      for (size_t d : resized_axes) {
        p.scales[d] = static_cast<float>(scale);
        p.out[d] = static_cast<int64_t>(scale * static_cast<double>(in[d]) + 0.5);
        p.resized[d] = static_cast<float>(scale * static_cast<double>(in[d]));
      }
  }
  p.roi.clear();
  if (a.coord == ResizeCoord::tf_crop_and_resize) {
    if (full.roi.empty()) {
      p.roi.assign(rank, 0.f);
      p.roi.resize(2 * rank, 1.f);
    } else {
      p.roi = full.roi;
    }
  }
  return "";
}

std::vector<std::vector<int64_t>> resize_nearest_tables(const ResizePlan& p, const ResizeSpec& a,
                                                        const std::vector<int64_t>& in) {
  std::vector<int64_t> strides(in.size(), 1);
  for (size_t d = in.size(); d-- > 1;) strides[d - 1] = strides[d] * in[d];
  std::vector<std::vector<int64_t>> tables(p.out.size());
  for (size_t d = 0; d < tables.size(); ++d) {
    const int64_t len = in[d];
    tables[d].resize(static_cast<size_t>(p.out[d]));
    for (int64_t o = 0; o < p.out[d]; ++o) {
      const float x =
          source_coordinate(p, a.coord, d, static_cast<float>(o), static_cast<float>(len));
      if (extrapolates(a.coord, x, len)) {
        tables[d][o] = -1;
        continue;
      }
      const int64_t i = std::clamp<int64_t>(nearest_index(a.rounding, x), 0, len - 1);
      tables[d][o] = i * strides[d];
    }
  }
  return tables;
}

std::vector<float> resize_interpolate(const ResizePlan& p, const ResizeSpec& a,
                                      const std::vector<int64_t>& in, std::vector<float> cur) {
  std::vector<int64_t> shape = in;
  std::vector<float> next;
  const size_t rank = shape.size();
  std::vector<std::vector<char>> outside(rank);
  bool any_outside = false;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t len = in[d];
    outside[d].assign(static_cast<size_t>(p.out[d]), 0);
    if (p.scales[d] == 1.f) continue;
    std::vector<Taps> taps(static_cast<size_t>(p.out[d]));
    for (int64_t o = 0; o < p.out[d]; ++o) {
      const float x =
          source_coordinate(p, a.coord, d, static_cast<float>(o), static_cast<float>(len));
      outside[d][o] = extrapolates(a.coord, x, len);
      any_outside |= outside[d][o] != 0;
      if (a.antialias && p.scales[d] < 1.f)
        taps[o] = antialias_taps(a.interp == ResizeInterp::cubic, x, len, p.scales[d],
                                 a.cubic_coeff_a, a.exclude_outside);
      else
        taps[o] = a.interp == ResizeInterp::linear
                      ? linear_taps(x, len)
                      : cubic_taps(x, len, a.cubic_coeff_a, a.exclude_outside);
    }
    std::vector<int64_t> resized = shape;
    resized[d] = p.out[d];
    next.assign(static_cast<size_t>(count(resized)), 0.f);
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
  return cur;
}

}  // namespace collage::rt_dynamic
