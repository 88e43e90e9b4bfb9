// Placement: which backend runs which group of nodes, how it was chosen, and the optimizer that
// chooses it (Collage: op-level dynamic programming, then graph-level evolutionary search).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/subgraph.h"

namespace collage {

// A cost the optimizer considered for a group and did not choose (for explanations).
struct Alternative {
  std::string backend;
  std::string origin;
  double cost_ms = -1;  // -1: not measured
  std::string note;     // e.g. why it was rejected ("build failed: ...")
};

// One group: nodes run as one kernel by one backend.
struct PlacedGroup {
  NodeSet nodes;
  std::string backend;
  std::string origin;   // the pattern or rule that produced the candidate
  double cost_ms = -1;  // measured (or modelled) cost of the kernel; -1 when unknown
  std::vector<Alternative> alternatives;
};

// A partition of every node of a graph into groups, in an executable (topological) order.
struct Placement {
  std::string strategy;  // "op-level", "two-level", "single:dnnl", "greedy", ...
  std::vector<PlacedGroup> groups;
  double estimated_ms = -1;  // sum of group costs (op-level) or measured end to end (two-level)
  std::vector<std::string> notes;  // search caps hit, budgets exhausted, seeds used

  // JSON with a top-level "groups" list (nodes by name, backend, cost, alternatives); the same
  // text `collage compile --report` writes.
  std::string to_json(const Graph& g) const;
};

// Checks that `p` covers every node of `g` exactly once with convex groups whose backends exist,
// and orders the groups topologically. Errors name the group at fault.
absl::Status validate_placement(const Graph& g, const BackendRegistry& backends, Placement& p);

}  // namespace collage
