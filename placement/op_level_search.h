// The op-level placement search (Collage §4.2): the cheapest cover of the graph by candidates,
// found by a memoised shortest-path search over "nodes already covered".
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/subgraph.h"
#include "placement/candidates.h"

namespace collage {

struct OpLevelOptions {
  size_t max_states = 2000000;  // memoised states before the search gives up (ResourceExhausted)
  // When (now_ms()) the search gives up the same way; infinite: never. (BERT-base with
  // boundaries charged by backend: 2 million states took 75 s.)
  double deadline_ms = HUGE_VAL;
};

// Boundary charges that depend on the backends on both sides: a value costs value_ms[v] once per
// backend other than its producer's that reads it, nothing where producer and readers share a
// backend (groups of one backend pass each other their buffers as they are). The search charges
// each (value, backend) pair when the later of its producer and its first reader on that backend
// is added, so its state also holds the backends of the covered nodes next to uncovered ones
// (reading from them, read by them, or reading the same value).
struct BoundaryCharges {
  std::vector<int> backend;      // per candidate: its backend (equal numbers: the same backend)
  std::vector<double> value_ms;  // per value of the graph
};

struct OpLevelResult {
  std::vector<size_t> chosen;  // candidate indices, by first node
  double cost = 0;             // sum of their costs (and boundary charges)
  size_t states = 0;           // states memoised (both passes)
  bool ready_order = false;    // the cycle-free second pass was needed
  std::vector<std::string> notes;
};

// The cheapest set of candidates that, together with the `fixed` groups, covers every node of
// `g` exactly once with groups that can run in some order. costs[i] is candidate i's cost; a
// negative or non-finite cost excludes it.
//
// First pass (the Collage search): from a state, the first uncovered node in topological order is
// covered by each usable candidate that contains it and overlaps nothing covered, so every
// partition into candidates is reached exactly once, and the cheapest is exact. If the cheapest
// partition has groups that depend on each other in a cycle (possible when a group is not
// path-connected), a second pass searches only orders in which every added candidate reads
// nothing uncovered — exactly the partitions that can run, at the price of more states.
// With `charges`, costs[i] is candidate i's kernel alone and the boundaries are charged as
// BoundaryCharges says (a node of a `fixed` group counts as on a backend of its own).
// Errors: NotFound naming a node no usable candidate covers; ResourceExhausted past max_states.
absl::StatusOr<OpLevelResult> op_level_search(const Graph& g, const CandidateSet& candidates,
                                              const std::vector<double>& costs,
                                              const std::vector<NodeSet>& fixed,
                                              const OpLevelOptions& options = {},
                                              const BoundaryCharges* charges = nullptr);

// True when the groups (disjoint node sets of `g`) can be ordered so that every group runs after
// the groups it reads from.
bool groups_acyclic(const Graph& g, const std::vector<NodeSet>& groups);

}  // namespace collage
