// Attribute structs of the operators added for tree-ensemble programs (GatherElements, ArgMax,
// TreeEnsemble).
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

namespace collage {

// TreeEnsemble (no attributes) walks an ensemble of T perfect binary trees of depth D for every
// row of X (f32 [batch, features]). Inputs: X; feature (i32 [T, N]), threshold (f32 [T, N]) and
// nan_left (bool [T, N]) for the N = 2^D - 1 internal nodes of each tree in level order (node k's
// children are 2k+1, left, and 2k+2, right); leaf (f32 [T, N + 1]); tree_output (i32 [T], the
// output each tree adds to); base (f32 [O]). A row goes left at node k when x = x[feature] is
// not NaN and !(x >= threshold) (x < threshold, and any x for a NaN threshold, which is how
// LightGBM's `<= +inf` is written), or x is NaN and nan_left. Output f32 [batch, O]: base[o] plus
// the leaves
// reached in the trees of output o, added in float32 in tree order (XGBoost's order).
// The reference kernel returns InvalidArgument for a feature or tree_output out of range.
using TreeEnsembleAttrs = NoAttrs;

}  // namespace collage
