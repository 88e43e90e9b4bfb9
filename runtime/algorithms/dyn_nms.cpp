// NonMaxSuppression: greedy selection by descending score, suppressing overlaps (dyn_nms.h).
#include "dyn_nms.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace collage::rt_dynamic {
namespace {

struct Corners {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
  float area() const { return (y2 - y1) * (x2 - x1); }
};

Corners corners(const float* b, bool center_point_box) {
  if (center_point_box) {
    const float xc = b[0], yc = b[1], w = b[2], h = b[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]),
          std::max(b[1], b[3])};
}

float iou(const Corners& a, const Corners& b) {
  const float area_a = a.area(), area_b = b.area();
  if (area_a <= 0 || area_b <= 0) return 0;
  const float h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0) return 0;
  const float inter = h * w;
  return inter / (area_a + area_b - inter);
}

}  // namespace

std::vector<int64_t> non_max_suppression(const float* boxes, const float* scores,
                                         const NmsParams& p) {
  std::vector<int64_t> selected;
  if (p.max_per_class <= 0 || p.boxes == 0) return selected;
  std::vector<Corners> box(p.boxes);
  std::vector<int64_t> order;
  std::vector<int64_t> kept;
  for (int64_t b = 0; b < p.batches; ++b) {
    for (int64_t i = 0; i < p.boxes; ++i)
      box[i] = corners(boxes + (b * p.boxes + i) * 4, p.center_point_box);
    for (int64_t c = 0; c < p.classes; ++c) {
      const float* s = scores + (b * p.classes + c) * p.boxes;
      order.clear();
      for (int64_t i = 0; i < p.boxes; ++i)
        if (!p.has_score_threshold || s[i] > p.score_threshold) order.push_back(i);
      // Descending score; NaN scores last; equal scores keep index order.
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        if (std::isnan(s[y])) return !std::isnan(s[x]);
        return s[x] > s[y];
      });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
        bool suppressed = false;
        for (int64_t k : kept) {
          if (iou(box[i], box[k]) > p.iou_threshold) {
            suppressed = true;
            break;
          }
        }
        if (suppressed) continue;
        kept.push_back(i);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  return selected;
}

}  // namespace collage::rt_dynamic
