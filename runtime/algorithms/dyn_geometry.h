// CenterCropPad (ONNX 18), Col2Im (ONNX 18) and AffineGrid (ONNX 20), whose output shapes follow
// an input's values: the element arithmetic shared by the reference kernels (lib/ops) and the
// runtime's dynamic module, which runs them when those values are known only at run time.
// Header-only, standard library only; shapes are checked by the callers.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace collage::rt_dynamic {

// Row-major strides of `shape`.
inline std::vector<int64_t> geometry_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// CenterCropPad: y (of `out` shape, same rank as `in`) gets x cropped or zero-padded about the
// centre of every axis; elements of `esize` bytes.
inline void center_crop_pad(const uint8_t* x, const std::vector<int64_t>& in, uint8_t* y,
                            const std::vector<int64_t>& out, size_t esize) {
  const auto rank = static_cast<int64_t>(in.size());
  // Input index = output index + shift per axis (a crop shifts forward, a pad back).
  std::vector<int64_t> shift(static_cast<size_t>(rank), 0);
  int64_t total = 1;
  for (int64_t a = 0; a < rank; ++a) {
    shift[a] = in[a] >= out[a] ? (in[a] - out[a]) / 2 : -((out[a] - in[a]) / 2);
    total *= out[a];
  }
  if (total == 0) return;
  std::memset(y, 0, static_cast<size_t>(total) * esize);
  const auto in_strides = geometry_strides(in);
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t src = 0;
    bool inside = true;
    for (int64_t a = 0; a < rank && inside; ++a) {
      const int64_t i = idx[a] + shift[a];
      inside = i >= 0 && i < in[a];
      src += i * in_strides[a];
    }
    if (inside) std::memcpy(y + o * esize, x + src * esize, esize);
    for (int64_t a = rank - 1; a >= 0 && ++idx[a] == out[a]; --a) idx[a] = 0;
  }
}

// Col2Im's sliding geometry for one spatial axis.
struct Col2ImAxis {
  int64_t image, block, positions, stride, pad_begin, dilation;
};

// Col2Im: acc (planes x prod(image), zeroed) += every column element of x
// ([planes, prod(block), prod(positions)], read as double by `get`) at its image position.
template <typename Get>
void col2im_accumulate(const std::vector<Col2ImAxis>& axes, int64_t planes, Get get,
                       std::vector<double>& acc) {
  const auto r = static_cast<int64_t>(axes.size());
  std::vector<int64_t> image(r), block(r), positions(r);
  for (int64_t d = 0; d < r; ++d)
    image[d] = axes[d].image, block[d] = axes[d].block, positions[d] = axes[d].positions;
  const auto image_strides = geometry_strides(image);
  const auto block_strides = geometry_strides(block);
  const auto pos_strides = geometry_strides(positions);
  int64_t B = 1, L = 1, plane = 1;
  for (int64_t d = 0; d < r; ++d) B *= block[d], L *= positions[d], plane *= image[d];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t l = 0; l < L; ++l) {
        int64_t at = 0;
        bool inside = true;
        for (int64_t d = 0; d < r && inside; ++d) {
          const Col2ImAxis& ax = axes[d];
          const int64_t kd = b / block_strides[d] % block[d];
          const int64_t ld = l / pos_strides[d] % positions[d];
          const int64_t v = ld * ax.stride - ax.pad_begin + kd * ax.dilation;
          inside = v >= 0 && v < image[d];
          at += v * image_strides[d];
        }
        if (inside) acc[p * plane + at] += get((p * B + b) * L + l);
      }
}

// AffineGrid: out ([N, spatial..., r], r = spatial.size()) gets theta ([N, r, r + 1], read as
// double by `theta`) applied to the normalised coordinates (x, y[, z], 1) of every point.
template <typename Get>
void affine_grid(Get theta, int64_t N, const std::vector<int64_t>& spatial, bool align,
                 std::vector<double>& out) {
  const auto r = static_cast<int64_t>(spatial.size());
  int64_t points = 1;
  for (int64_t d : spatial) points *= d;
  out.assign(static_cast<size_t>(N * points * r), 0.0);
  // The normalised coordinate of point i of an axis of `len` points.
  auto base = [align](int64_t i, int64_t len) {
    if (align)
      return len > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(len - 1) : -1.0;
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(len);
  };
  std::vector<double> homo(static_cast<size_t>(r + 1), 1.0);
  for (int64_t p = 0; p < points; ++p) {
    // homo = (x, y[, z], 1): the innermost axis (W) first.
    for (int64_t i = 0, rest = p; i < r; ++i) {
      const int64_t len = spatial[r - 1 - i];
      homo[i] = base(rest % len, len);
      rest /= len;
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t row = 0; row < r; ++row) {
        double v = 0;
        for (int64_t c = 0; c <= r; ++c) v += theta((n * r + row) * (r + 1) + c) * homo[c];
        out[(n * points + p) * r + row] = v;
      }
  }
}

}  // namespace collage::rt_dynamic
