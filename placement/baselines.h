// BYOC-style baseline placements: one backend plus a fallback (`single:NAME`), and backends
// claiming regions in registry priority order (`greedy`). They are what the Collage searches are
// compared against, and what places a model when no search is wanted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/placement.h"

namespace collage {

struct BaselineOptions {
  // The backend that takes the nodes the others leave, in groups of its own candidates (its
  // patterns and rules). A node it does not propose either is an error naming the node (NotFound):
  // a backend proposes only what it can build. The command line and the benches pass "native"
  // (generated code, most operators); "reference" runs every node and needs no code generator.
  std::string fallback = "reference";
  // The backends `greedy` lets claim (PlacementOptions::backends), by name; empty: every
  // registered one.
  std::vector<std::string> backends;
  RuleOptions rules;
  // BYOC's MergeCompilerRegions step: after a backend has claimed its candidates, neighbouring
  // groups of that backend are merged while the result stays convex and the group order
  // acyclic. Only for backends whose build accepts any graph of the operators they claim.
  bool merge_regions = false;
};

// `single:NAME`: every maximal candidate of backend `backend`, chosen greedily in topological
// order (first node, then larger first) without overlaps, then its smaller candidates where they
// still fit; the rest goes to the fallback's candidates. The placement is validated and ordered.
// NotFound, naming the node, its operator and why, when a node fits no candidate of either.
absl::StatusOr<Placement> place_single(const Graph& g, const BackendRegistry& backends,
                                       std::string_view backend,
                                       const BaselineOptions& options = {});

// `greedy`: each backend except the fallback, in registry order, claims its candidates as
// place_single does, among the nodes earlier backends left (BYOC: annotate, merge, partition);
// the rest goes to the fallback's candidates (NotFound for a node none of them holds).
absl::StatusOr<Placement> place_greedy(const Graph& g, const BackendRegistry& backends,
                                       const BaselineOptions& options = {});

// Dispatches "single:NAME" or "greedy"; InvalidArgument for anything else.
absl::StatusOr<Placement> place_baseline(std::string_view strategy, const Graph& g,
                                         const BackendRegistry& backends,
                                         const BaselineOptions& options = {});

}  // namespace collage
