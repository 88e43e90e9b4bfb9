// Models whose expected outputs ONNX Runtime computed (the .npz files tests/strings, tests/ml and
// tests/batch write: the inputs under their names, each output under "out_" + its name), and the
// check of collage's outputs against them.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "collage/npz.h"
#include "collage/tensor.h"

namespace collage::testing {

struct OrtArrays {
  std::vector<std::pair<std::string, Tensor>> inputs, expected;  // in archive order
};

// Splits the arrays of such an .npz into the inputs and the expected outputs.
inline OrtArrays split_ort_arrays(NamedTensors arrays) {
  OrtArrays out;
  for (auto& [key, t] : arrays) {
    if (key.rfind("out_", 0) == 0)
      out.expected.emplace_back(key.substr(4), std::move(t));
    else
      out.inputs.emplace_back(key, std::move(t));
  }
  return out;
}

// `got` equals ONNX Runtime's `want`: strings and integers exactly; f32 elements within
// max(abs, rel * |want|), a NaN where ONNX Runtime has one and an infinity equal to its own.
inline void check_matches_ort(const Tensor& got, const Tensor& want, const std::string& name,
                              float abs, float rel = 0.f) {
  INFO("output " << name << ": " << type_to_string(got.type()) << " against "
                 << type_to_string(want.type()));
  REQUIRE(got.shape() == want.shape());
  if (want.dtype() == DType::f32) {
    REQUIRE(got.dtype() == DType::f32);
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float g = got.data<float>()[i], w = want.data<float>()[i];
      INFO("element " << i << ": " << g << " against " << w);
      if (std::isnan(w))
        CHECK(std::isnan(g));
      else if (std::isinf(w))
        CHECK(g == w);
      else
        CHECK(std::abs(g - w) <= std::max(abs, rel * std::abs(w)));
    }
    return;
  }
  CHECK(got.identical(want));
}

}  // namespace collage::testing
