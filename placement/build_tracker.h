// BuildTracker: the groups of a compile whose kernels an end-to-end evaluation built (kept for
// the artifact: the native backend's code cache, the kernel shelf), so that what building a
// placement's kernels still costs can be predicted and charged to the budget before it is spent.
#pragma once

#include <set>
#include <string>
#include <utility>

#include "collage/placement.h"

namespace collage {

// A PlacementEvaluator that evaluates through `inner` (borrowed) and notes the groups of every
// placement it evaluated successfully.
class BuildTracker : public PlacementEvaluator {
 public:
  explicit BuildTracker(PlacementEvaluator& inner) : inner_(inner) {}

  absl::StatusOr<double> latency_ms(const Placement& p) override;

  // Whether an evaluation built group `nodes` on `backend`.
  bool built(const NodeSet& nodes, const std::string& backend) const {
    return built_.count({nodes, backend}) > 0;
  }

 private:
  PlacementEvaluator& inner_;
  std::set<std::pair<NodeSet, std::string>> built_;
};

}  // namespace collage
