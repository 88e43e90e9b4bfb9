// The graph-level search's outcome kept in the cost database, so that a second compile of the same
// model with the same options reuses the placement the first one measured instead of searching
// again (same seed and database: the identical placement, in seconds).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/placement.h"
#include "placement/cost_database.h"

namespace collage {

// The database key of a two-level search: the device, and a hash of the graph's canonical
// signature with every option that changes the search's result (seed, budget, depth, fallback,
// executor, population) and the name and version of each backend taking part.
CostKey search_memo_key(const std::string& device, const Graph& g,
                        const PlacementOptions& options,
                        const std::vector<const Backend*>& backends);

// A placement's groups as text, "backend:node,node,...;backend:..." (node ids), and back. Errors
// (InvalidArgument) for text that does not parse or names nodes outside the graph.
std::string encode_groups(const Placement& p);
absl::StatusOr<std::vector<std::pair<NodeSet, std::string>>> decode_groups(std::string_view text,
                                                                          size_t num_nodes);

// The rows of a comparison of the chosen placement with the baselines (OptimizeResult::compared)
// as text, one "strategy<TAB>ms<TAB>note" line each (tabs and newlines in a note become spaces),
// and back; nullopt for text that does not parse or has no row.
std::string encode_compared(const std::vector<MeasuredPlacement>& rows);
std::optional<std::vector<MeasuredPlacement>> decode_compared(std::string_view text);

}  // namespace collage
