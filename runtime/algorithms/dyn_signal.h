// The signal generators of ONNX 17 (HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix),
// computed in double, shared by the reference kernels (lib/ops/signal_generators.cpp) and the
// runtime's dynamic module, which runs them when the sizes are known only at run time.
// Header-only, standard library only.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

namespace collage::rt_dynamic {

enum class WindowKind : uint8_t { hann, hamming, blackman };

// w[n] = sum_k c_k cos(2 pi k n / N) for n in [0, size), with N the size (periodic) or
// size - 1 (symmetric).
inline std::vector<double> cosine_window(WindowKind kind, int64_t size, bool periodic) {
  double c[3] = {0.5, -0.5, 0.0};
  if (kind == WindowKind::hamming) c[0] = 25.0 / 46.0, c[1] = -21.0 / 46.0;
  if (kind == WindowKind::blackman) c[0] = 0.42, c[1] = -0.5, c[2] = 0.08;
  const int terms = kind == WindowKind::blackman ? 3 : 2;
  const auto denom = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    double v = 0;
    for (int t = 0; t < terms; ++t)
      v += c[t] * std::cos(2 * std::numbers::pi * t * static_cast<double>(n) / denom);
    w[n] = v;
  }
  return w;
}

// MelWeightMatrix's [spectrum x bins] weights (spectrum = dft_length / 2 + 1) into `w`, by ONNX's
// definition: bins + 2 edges spaced by (high - low) / (bins + 2) mels, each mapped to the
// spectrogram bin floor((dft_length + 1) * hertz / sample_rate); filter i rises from edge i to
// edge i + 1 and falls to edge i + 2. Empty string on success, else what is wrong.
inline std::string mel_weight_matrix(int64_t bins, int64_t dft, int64_t rate, double lo, double hi,
                                     std::vector<double>& w) {
  const int64_t spectrum = dft / 2 + 1;
  if (rate <= 0) return "sample_rate is " + std::to_string(rate);
  auto to_mel = [](double hz) { return 2595 * std::log1p(hz / 700) / std::log(10.0); };
  const double low_mel = to_mel(lo);
  const double step = (to_mel(hi) - low_mel) / static_cast<double>(bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    const double hz = 700 * std::expm1((static_cast<double>(i) * step + low_mel) / 2595 *
                                       std::log(10.0));
    const double b = std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate));
    if (!(b >= 0 && b < static_cast<double>(spectrum)))
      return "mel edge " + std::to_string(i) + " falls on spectrogram bin " +
             (std::abs(b) < 9e18 ? std::to_string(static_cast<int64_t>(b)) : std::to_string(b)) +
             ", outside [0, " + std::to_string(spectrum) +
             "); the hertz bounds must lie within [0, sample_rate / 2]";
    edge[i] = static_cast<int64_t>(b);
  }
  w.assign(static_cast<size_t>(spectrum * bins), 0.0);
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left) {
      w[center * bins + i] = 1;
    } else {
      for (int64_t j = left; j <= center; ++j)
        w[j * bins + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      w[j * bins + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  return "";
}

}  // namespace collage::rt_dynamic
