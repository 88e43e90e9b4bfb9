// Costing every candidate through a CostModel: the edge costs of the op-level search, with
// boundary charges, failures kept as explanations.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "collage/placement.h"
#include "placement/candidates.h"
#include "placement/op_level_search.h"

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
  // Channel block of the blocked layouts (BuildOptions::channel_block, resolved; 0: plain only).
  // A candidate is costed with the layouts it would get among neighbours on its own backend
  // (measured_layouts): inside a region of one backend, which is where it runs as measured.
  int32_t channel_block = 0;
};

// The layouts (one per value of `g`, plain but for the candidate's boundary; empty when all are
// plain) candidate `c` is costed with: a value it reads or writes is channel-blocked by `c_block`
// when the candidate's backend takes it blocked both in the candidate (`plain`, the candidate cut
// out with every layout plain) and in the group on the other side, as a fusion rule would form
// it on the same backend (the chain back from the producer, or from each reader outside the
// candidate, to a convolution or matmul anchor): what assign_layouts would decide if the
// neighbours ran on that backend. `chains` caches those neighbour groups by node id.
std::vector<Layout> measured_layouts(const Context& ctx, const Graph& g, const Candidate& c,
                                     const ExtractedSubgraph& plain, int32_t c_block,
                                     std::map<NodeId, absl::StatusOr<ExtractedSubgraph>>& chains);

// Costs candidates `which` (indices into `candidates`) into `costs` (resized to fit the set),
// one prefetch batch per few consecutive first nodes so that competing candidates are measured
// together.
// `progress(done, which.size())` after each candidate.
void cost_candidates(const Context& ctx, const Graph& g, const CandidateSet& candidates,
                     const std::vector<size_t>& which, CostModel& model,
                     const CostingOptions& options, std::vector<CandidateCost>& costs,
                     const std::function<void(size_t, size_t)>& progress = nullptr);

// The same for candidates [first, candidates.size()).
void cost_candidates(const Context& ctx, const Graph& g, const CandidateSet& candidates,
                     size_t first, CostModel& model, const CostingOptions& options,
                     std::vector<CandidateCost>& costs,
                     const std::function<void(size_t, size_t)>& progress = nullptr);

// The op-level edge costs of `costs` (CandidateCost::total()).
std::vector<double> edge_costs(const std::vector<CandidateCost>& costs);

// The kernel costs of `costs` (CandidateCost::kernel_ms; -1 unusable): the op-level search's
// costs when it charges boundaries by backend (BoundaryCharges).
std::vector<double> kernel_costs(const std::vector<CandidateCost>& costs);

// What passing each value of `g` from one group to another costs (CostModel::boundary_ms of its
// type; graph inputs, constants and values no node reads nothing): BoundaryCharges::value_ms.
std::vector<double> boundary_value_ms(const Graph& g, CostModel& model);

// The boundary charges of `candidates`: each one's backend numbered, and `value_ms`.
BoundaryCharges boundary_charges(const CandidateSet& candidates, std::vector<double> value_ms);

// What the groups of `genes` (a cover of `g`) pay at their boundaries under `charges`: each
// value once per backend reading it from another (BoundaryCharges).
double charged_boundaries(const Graph& g, const CandidateSet& candidates,
                          const BoundaryCharges& charges, const std::vector<size_t>& genes);

}  // namespace collage
