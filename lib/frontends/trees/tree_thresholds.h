// Every split rule of a tree ensemble rewritten as one float32 test `x < threshold`, with what
// NaN and LightGBM's zero band do, so the tensor programs need a single comparison operator.
#pragma once

#include <cstdint>

#include "collage/trees.h"

namespace collage {

struct FloatSplit {
  int32_t feature = 0;
  float threshold = 0.f;  // non-missing x goes left iff x < threshold (float32)
  bool nan_left = false;  // where NaN goes
  // |x| < zero_band goes where NaN goes; 0 when the node has no zero band.
  float zero_band = 0.f;
  // Where +inf goes. `x < threshold` sends it right, except for `x <= +inf`, which no float32
  // threshold expresses: such a node has threshold +inf and inf_left set.
  bool inf_left = false;
};

// The float32 form of internal node `node` of tree `tree`, for inputs already passed through
// the model's zero_threshold rule. For every float32 x (NaN and infinities included) it sends x
// where the node's own rule does.
FloatSplit float_split(const TreeEnsemble& m, size_t tree, int32_t node);

// b such that, for every float32 x, double(x) <= t exactly when x < b.
float float_bound_less_equal(double t);

// Which optional per-node tests the model needs: a zero band (LightGBM zero-as-missing) and
// +inf sent left (LightGBM's `<= +inf` splits between missing and present values).
struct SplitFeatures {
  bool zero_band = false;
  bool inf_left = false;
};
SplitFeatures split_features(const TreeEnsemble& m);

}  // namespace collage
