// NonMaxSuppression (ONNX opset 10-24), the algorithm shared by the reference kernel (lib/ops)
// and the runtime's dynamic module: plain C++, no dependency beyond the standard library.
#pragma once

#include <cstdint>
#include <vector>

namespace collage::rt_dynamic {

struct NmsParams {
  int64_t batches = 0;  // boxes: [batches, boxes, 4]; scores: [batches, classes, boxes]
  int64_t classes = 0;
  int64_t boxes = 0;
  int64_t max_per_class = 0;  // at most this many boxes kept per batch and class; <= 0: none
  float iou_threshold = 0;    // a box overlapping a kept one by more than this is suppressed
  bool has_score_threshold = false;
  float score_threshold = 0;  // boxes scoring at most this are dropped (when given)
  bool center_point_box = false;  // boxes are [x_center, y_center, width, height], not corners
};

// The kept boxes as (batch, class, box) triples, flattened: batch by batch, class by class, and
// within a class in the order they were kept (score descending; equal scores by box index).
// Corner boxes may give either corner first on each axis, as in ONNX Runtime. IoU is
// intersection over union, 0 when either box has no area.
std::vector<int64_t> non_max_suppression(const float* boxes, const float* scores,
                                         const NmsParams& p);

}  // namespace collage::rt_dynamic
