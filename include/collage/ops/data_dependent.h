// Attribute structs of the operators whose output shapes depend on their input values (NonZero,
// Unique, NonMaxSuppression): at compile time their outputs have a dynamic dimension
// (kDynamicDim) unless the inputs are constants.
#pragma once

#include <cstdint>
#include <limits>

#include "collage/attrs.h"

namespace collage {

// Unique(X): the distinct elements of X (axis == kAll), or the distinct slices along `axis`.
// Outputs: Y, then int64 indices (first occurrence of each), inverse_indices and counts.
struct UniqueAttrs : AttrsOf<UniqueAttrs> {
  static constexpr int64_t kAll = std::numeric_limits<int64_t>::min();
  int64_t axis = kAll;
  int64_t sorted = 1;  // 1: ascending; 0: in order of first occurrence
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("sorted", sorted);
  }
};

// NonMaxSuppression(boxes, scores, max_output_boxes_per_class?, iou_threshold?,
// score_threshold?) -> int64 [selected, 3] (batch, class, box).
struct NonMaxSuppressionAttrs : AttrsOf<NonMaxSuppressionAttrs> {
  int64_t center_point_box = 0;  // 1: boxes are [x_center, y_center, width, height]
  template <class V>
  void fields(V& v) {
    v.field("center_point_box", center_point_box);
  }
};

}  // namespace collage
