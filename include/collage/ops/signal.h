// Attribute structs of the signal generators: the window functions and MelWeightMatrix.
#pragma once

#include <cstdint>
#include <string>

#include "collage/attrs.h"

namespace collage {

// BlackmanWindow / HammingWindow / HannWindow(size) -> [size]: the window's coefficients
// (ONNX 17). `periodic` 1 divides by size (a window for spectral analysis), 0 by size - 1 (a
// symmetric filter). `dtype` is the output's element type as dtype_name() writes it.
struct SignalWindowAttrs : AttrsOf<SignalWindowAttrs> {
  std::string dtype = "f32";
  int64_t periodic = 1;
  template <class V>
  void fields(V& v) {
    v.field("dtype", dtype);
    v.field("periodic", periodic);
  }
};

// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)
// -> [dft_length / 2 + 1, num_mel_bins]: triangular filters spaced evenly on the mel scale that
// map a linear-frequency spectrum to mel bins (ONNX 17). `dtype` as for the windows.
struct MelWeightMatrixAttrs : AttrsOf<MelWeightMatrixAttrs> {
  std::string dtype = "f32";
  template <class V>
  void fields(V& v) {
    v.field("dtype", dtype);
  }
};

}  // namespace collage
