// Costing candidates in batches by first node, with boundary charges.
#include "placement/cost_model.h"

#include <map>

#include "core/str_cat.h"

namespace collage {

void cost_candidates(const Context& ctx, const Graph& g, const CandidateSet& candidates,
                     size_t first, CostModel& model, const CostingOptions& options,
                     std::vector<CandidateCost>& costs,
                     const std::function<void(size_t, size_t)>& progress) {
  const size_t total = candidates.size();
  if (costs.size() < total) costs.resize(total);
  // Batches: the candidates starting at the same node compete in the op-level search.
  std::map<NodeId, std::vector<size_t>> batches;
  for (size_t c = first; c < total; ++c) batches[candidates[c].nodes.first()].push_back(c);
  size_t done = first;
  for (const auto& [node, members] : batches) {
    std::vector<absl::StatusOr<ExtractedSubgraph>> groups;
    std::vector<std::pair<const Candidate*, const ExtractedSubgraph*>> batch;
    groups.reserve(members.size());
    for (size_t c : members) groups.push_back(extract_subgraph(ctx, g, candidates[c].nodes));
    for (size_t i = 0; i < members.size(); ++i)
      if (groups[i].ok()) batch.push_back({&candidates[members[i]], &*groups[i]});
    model.prefetch(batch);
    for (size_t i = 0; i < members.size(); ++i) {
      CandidateCost& out = costs[members[i]];
      out = CandidateCost();
      if (!groups[i].ok()) {
        out.error = str_cat("cannot extract the group: ", groups[i].status().message());
      } else if (auto cost = model.cost(candidates[members[i]], *groups[i]); !cost.ok()) {
        out.error = std::string(cost.status().message());
      } else {
        out.kernel_ms = cost->ms;
        out.samples = cost->samples;
        out.spread = cost->spread;
        out.from_cache = cost->from_cache;
        if (options.charge_boundaries)
          for (ValueId v : groups[i]->parent_inputs)
            if (g.value(v).kind == ValueKind::node_output)
              out.boundary_ms += model.boundary_ms(g.value(v).type);
      }
      if (progress) progress(++done, total);
    }
  }
}

std::vector<double> edge_costs(const std::vector<CandidateCost>& costs) {
  std::vector<double> out;
  out.reserve(costs.size());
  for (const CandidateCost& c : costs) out.push_back(c.total());
  return out;
}

}  // namespace collage
