// Attribute struct of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "collage/attrs.h"

namespace collage {

// NegativeLogLikelihoodLoss(input [N, C, d...], target [N, d...], [weight [C]]) and
// SoftmaxCrossEntropyLoss(scores, labels, [weights]) -> (loss, [log_prob]). `reduction` is
// "none" (a loss per element of target), "sum" or "mean" (the sum divided by the total weight of
// the elements not ignored). Targets equal to ignore_index contribute nothing; kNoIgnoreIndex
// (the default) ignores none.
struct LossAttrs : AttrsOf<LossAttrs> {
  static constexpr int64_t kNoIgnoreIndex = std::numeric_limits<int64_t>::min();
  std::string reduction = "mean";
  int64_t ignore_index = kNoIgnoreIndex;
  template <class V>
  void fields(V& v) {
    v.field("reduction", reduction);
    v.field("ignore_index", ignore_index);
  }
};

}  // namespace collage
