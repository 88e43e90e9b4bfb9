// Attribute struct of TopK.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/attrs.h"

namespace collage {

// TopK(X) -> (Values, Indices i64): the k largest (largest != 0) or smallest elements of X along
// `axis` (negative counts from the end), in order from the largest (smallest) down; equal
// values keep the order of their indices, and NaN counts as larger than any number. `sorted` = 0
// allows any order; collage returns the sorted one. k is one value; ONNX gives it as input K
// (version 10 on), which stays an input of the node when the model computes it (an attribute
// input, OpDef::attr_inputs: the output's axis is then a run-time dimension).
struct TopKAttrs : AttrsOf<TopKAttrs> {
  std::vector<int64_t> k;
  int64_t axis = -1;
  int64_t largest = 1;
  int64_t sorted = 1;
  template <class V>
  void fields(V& v) {
    v.field("k", k);
    v.field("axis", axis);
    v.field("largest", largest);
    v.field("sorted", sorted);
  }
};

}  // namespace collage
