// Attribute structs of the elementwise operators (activations, Clip, Cast, Dropout) and of the
// reductions (ReduceMean, ReduceSum, ReduceMax). Field names are the ONNX attribute names.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "collage/attrs.h"

namespace collage {

// LeakyRelu: y = x < 0 ? alpha * x : x.
struct LeakyReluAttrs : AttrsOf<LeakyReluAttrs> {
  float alpha = 0.01f;
  template <class V>
  void fields(V& v) {
    v.field("alpha", alpha);
  }
};

// HardSigmoid: y = max(0, min(1, alpha * x + beta)).
struct HardSigmoidAttrs : AttrsOf<HardSigmoidAttrs> {
  float alpha = 0.2f;
  float beta = 0.5f;
  template <class V>
  void fields(V& v) {
    v.field("alpha", alpha);
    v.field("beta", beta);
  }
};

// Gelu: approximate is "none" (0.5 x (1 + erf(x / sqrt 2))) or "tanh"
// (0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))).
struct GeluAttrs : AttrsOf<GeluAttrs> {
  std::string approximate = "none";
  template <class V>
  void fields(V& v) {
    v.field("approximate", approximate);
  }
};

// Clip: y = min(max(x, min), max); when min > max every element becomes max (ONNX). ONNX passes
// min and max as inputs from opset 11; the importer turns constant ones into these attributes.
struct ClipAttrs : AttrsOf<ClipAttrs> {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  template <class V>
  void fields(V& v) {
    v.field("min", min);
    v.field("max", max);
  }
};

// Cast: `to` is a dtype name as dtype_name() writes it ("f32", "i64", "bool", ...).
struct CastAttrs : AttrsOf<CastAttrs> {
  std::string to = "f32";
  template <class V>
  void fields(V& v) {
    v.field("to", to);
  }
};

// Dropout in inference: the output is the input and the optional mask is all true. `ratio` must
// lie in [0, 1); `seed` is kept so a model round-trips, and never used.
struct DropoutAttrs : AttrsOf<DropoutAttrs> {
  int64_t seed = 0;
  float ratio = 0.5f;
  // Non-zero: training mode, accepted only with ratio 0 (where dropout is the identity too). An
  // attribute input (ONNX's training_mode, read at run time), like ratio.
  float training_mode = 0.f;
  template <class V>
  void fields(V& v) {
    v.field("seed", seed);
    v.field("ratio", ratio);
    v.field("training_mode", training_mode);
  }
};

// ReduceMean, ReduceSum, ReduceMax. `axes` may be negative; empty means every axis, unless
// noop_with_empty_axes is non-zero, in which case the operator is the identity. keepdims non-zero
// keeps reduced axes with size 1.
struct ReduceAttrs : AttrsOf<ReduceAttrs> {
  std::vector<int64_t> axes;
  int64_t keepdims = 1;
  int64_t noop_with_empty_axes = 0;
  template <class V>
  void fields(V& v) {
    v.field("axes", axes);
    v.field("keepdims", keepdims);
    v.field("noop_with_empty_axes", noop_with_empty_axes);
  }
};

}  // namespace collage
