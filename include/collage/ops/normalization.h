// Attribute structs of the normalisation operators added for ONNX coverage (LpNormalization,
// RMSNormalization, MeanVarianceNormalization, GroupNormalization, LRN). Field names are the ONNX attribute names.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/attrs.h"
namespace collage {

// LpNormalization(X): X divided by its L1 (p 1) or L2 (p 2) norm along `axis`.
struct LpNormalizationAttrs : AttrsOf<LpNormalizationAttrs> {
  int64_t axis = -1;
  int64_t p = 2;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("p", p);
  }
};

// RMSNormalization(X, scale): X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * scale,
// computed in f32 or wider.
struct RMSNormalizationAttrs : AttrsOf<RMSNormalizationAttrs> {
  int64_t axis = -1;
  float epsilon = 1e-5f;
  int64_t stash_type = 1;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("epsilon", epsilon);
    v.field("stash_type", stash_type);
  }
};

// MeanVarianceNormalization(X): (X - mean) / sqrt(variance), both over `axes` (epsilon 1e-9
// added to the deviation, as ONNX's function body does).
struct MeanVarianceNormalizationAttrs : AttrsOf<MeanVarianceNormalizationAttrs> {
  std::vector<int64_t> axes = {0, 2, 3};
  template <class V>
  void fields(V& v) {
    v.field("axes", axes);
  }
};

// GroupNormalization(X, scale, bias) (version 21): X [N, C, ...] normalised over each of
// num_groups groups of channels, then scale[c] * x + bias[c].
struct GroupNormalizationAttrs : AttrsOf<GroupNormalizationAttrs> {
  float epsilon = 1e-5f;
  int64_t num_groups = 0;  // required
  int64_t stash_type = 1;
  template <class V>
  void fields(V& v) {
    v.field("epsilon", epsilon);
    v.field("num_groups", num_groups);
    v.field("stash_type", stash_type);
  }
};

// LRN(X) over N x C x ...: X / (bias + alpha / size * sum of squares over `size` channels)^beta.
struct LRNAttrs : AttrsOf<LRNAttrs> {
  float alpha = 1e-4f;
  float beta = 0.75f;
  float bias = 1.f;
  int64_t size = 0;  // required
  template <class V>
  void fields(V& v) {
    v.field("alpha", alpha);
    v.field("beta", beta);
    v.field("bias", bias);
    v.field("size", size);
  }
};

}  // namespace collage
