// Costing every candidate through a CostModel: the edge costs of the op-level search, with
// boundary charges, failures kept as explanations.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/placement.h"
#include "placement/candidates.h"

namespace collage {

struct CandidateCost {
  double kernel_ms = -1;   // the cost model's figure; -1 when the candidate is unusable
  double boundary_ms = 0;  // charged for the values it reads from other groups
  int samples = 0;
  double spread = 0;
  bool from_cache = false;
  std::string error;  // why it is unusable (build or run failure)
  // The op-level search's edge cost: kernel + boundary, or -1.
  double total() const { return kernel_ms < 0 ? -1 : kernel_ms + boundary_ms; }
};

struct CostingOptions {
  // Charge CostModel::boundary_ms for each value read from outside the candidate that another
  // node produces (graph inputs and constants are not charged).
  bool charge_boundaries = true;
};

// Costs candidates [first, candidates.size()) into `costs` (resized to fit), one prefetch batch per
// first node so that competing candidates are measured together. `progress(done, total)` after
// each candidate.
void cost_candidates(const Context& ctx, const Graph& g, const CandidateSet& candidates,
                     size_t first, CostModel& model, const CostingOptions& options,
                     std::vector<CandidateCost>& costs,
                     const std::function<void(size_t, size_t)>& progress = nullptr);

// The op-level edge costs of `costs` (CandidateCost::total()).
std::vector<double> edge_costs(const std::vector<CandidateCost>& costs);

}  // namespace collage
