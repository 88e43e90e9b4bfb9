// The competitors of a group the op-level search chose, for the placement's explanation.
#pragma once

#include <vector>

#include "collage/placement.h"
#include "placement/candidates.h"
#include "placement/cost_model.h"

namespace collage {

// The competitors of chosen candidate `chosen` in the op-level search: the candidates starting at
// its first node, those with exactly its nodes first, cheapest first (at most six); failures with
// their reasons.
std::vector<Alternative> alternatives_of(const Graph& g, const CandidateSet& cands,
                                         const std::vector<CandidateCost>& costs, size_t chosen);

}  // namespace collage
