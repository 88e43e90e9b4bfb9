// Attribute structs of the operators added for tree-ensemble programs (GatherElements, ArgMax).
// Field names are the ONNX attribute names.
#pragma once

#include <cstdint>

#include "collage/attrs.h"

namespace collage {

// GatherElements(data, indices): out[i][j][k] = data[indices[i][j][k]][j][k] for axis 0 (and so
// on for the other axes). `indices` (i32 or i64, negative counts from the end) has the rank of
// `data`, and on every axis but `axis` a size no larger than data's; the output has its shape.
struct GatherElementsAttrs : AttrsOf<GatherElementsAttrs> {
  int64_t axis = 0;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
  }
};

// ArgMax(data) -> i64: the index of the largest element along `axis` (negative counts from the
// end); the first one on ties, the last one when select_last_index is non-zero. keepdims non-zero
// keeps the reduced axis with size 1. NaN never compares larger, so it is picked only when it is
// the first element.
struct ArgMaxAttrs : AttrsOf<ArgMaxAttrs> {
  int64_t axis = 0;
  int64_t keepdims = 1;
  int64_t select_last_index = 0;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("keepdims", keepdims);
    v.field("select_last_index", select_last_index);
  }
};

}  // namespace collage
