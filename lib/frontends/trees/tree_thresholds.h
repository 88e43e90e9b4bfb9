// Every split rule of a tree ensemble rewritten as one float32 test `x < threshold`, with what
// NaN and LightGBM's zero band do, so the tensor programs need a single comparison operator.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "collage/trees.h"

namespace collage {

struct FloatSplit {
  int32_t feature = 0;
  float threshold = 0.f;  // non-missing x goes left iff x < threshold (float32)
  bool nan_left = false;  // where NaN goes
  // |x| < zero_band goes where NaN goes; 0 when the node has no zero band.
  float zero_band = 0.f;
};

// The float32 form of internal node `node` of tree `tree`. For every float32 x (NaN and
// infinities included) it sends x where the node's own rule does. Unimplemented for `<= +inf`,
// which no float32 `<` reproduces (x = +inf must go left).
absl::StatusOr<FloatSplit> float_split(const TreeEnsemble& m, size_t tree, int32_t node);

// True when some node of the model has a zero band (LightGBM zero-as-missing).
bool has_zero_band(const TreeEnsemble& m);

}  // namespace collage
