// Attribute structs of the elementwise operators added for ONNX coverage (activations with
// parameters, IsInf, BitShift, Mod). Field names are the ONNX attribute names.
#pragma once

#include <cstdint>
#include <string>

#include "collage/attrs.h"

namespace collage {

// Elu (alpha 1), Celu (alpha 1), ThresholdedRelu (alpha 1), Swish (alpha 1, y = x sigmoid(a x)).
struct AlphaAttrs : AttrsOf<AlphaAttrs> {
  float alpha = 1.f;
  template <class V>
  void fields(V& v) {
    v.field("alpha", alpha);
  }
};

// Selu: y = gamma * (x > 0 ? x : alpha * (exp(x) - 1)).
struct SeluAttrs : AttrsOf<SeluAttrs> {
  float alpha = 1.67326319217681884765625f;
  float gamma = 1.05070102214813232421875f;
  template <class V>
  void fields(V& v) {
    v.field("alpha", alpha);
    v.field("gamma", gamma);
  }
};

// Shrink: y = x < -lambd ? x + bias : x > lambd ? x - bias : 0.
struct ShrinkAttrs : AttrsOf<ShrinkAttrs> {
  float bias = 0.f;
  float lambd = 0.5f;
  template <class V>
  void fields(V& v) {
    v.field("bias", bias);
    v.field("lambd", lambd);
  }
};

// IsInf: true for +inf when detect_positive, for -inf when detect_negative.
struct IsInfAttrs : AttrsOf<IsInfAttrs> {
  int64_t detect_negative = 1;
  int64_t detect_positive = 1;
  template <class V>
  void fields(V& v) {
    v.field("detect_negative", detect_negative);
    v.field("detect_positive", detect_positive);
  }
};

// BitShift on unsigned integers: direction "LEFT" or "RIGHT"; shifts of the bit width or more
// give 0.
struct BitShiftAttrs : AttrsOf<BitShiftAttrs> {
  std::string direction;
  template <class V>
  void fields(V& v) {
    v.field("direction", direction);
  }
};

// Mod: fmod 0 is the integer modulus with the divisor's sign (Python's %); fmod 1 is C's fmod
// (the dividend's sign), required for floats.
struct ModAttrs : AttrsOf<ModAttrs> {
  int64_t fmod = 0;
  template <class V>
  void fields(V& v) {
    v.field("fmod", fmod);
  }
};

}  // namespace collage
