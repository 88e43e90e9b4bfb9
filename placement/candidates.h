// Candidate collection for the placement searches: every convex candidate of every selected
// backend, deduplicated, capped in size and count, indexed by first node.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/subgraph.h"

namespace collage {

// The caps never drop a candidate of the whole graph (one group on one backend).
struct CandidateOptions {
  int max_depth = 8;     // candidates with more nodes are dropped (also passed to the rules)
  size_t max_count = 0;  // 0: no limit; else the largest candidates beyond it are dropped
};

// The candidates of a graph, in a deterministic order: by first node, then backend order, then
// larger first (so that the searches, which keep the first of equally cheap choices, prefer fewer
// groups), then node set.
class CandidateSet {
 public:
  const std::vector<Candidate>& all() const { return all_; }
  const Candidate& operator[](size_t i) const { return all_[i]; }
  size_t size() const { return all_.size(); }
  // Indices of the candidates whose smallest node is `n`.
  const std::vector<size_t>& starting_at(NodeId n) const { return by_first_[n]; }
  // Index of the candidate with exactly `nodes` on `backend`, or -1.
  int find(const NodeSet& nodes, const Backend* backend) const;
  // Indices of every candidate with exactly `nodes` (any backend).
  std::vector<size_t> with_nodes(const NodeSet& nodes) const;
  // Adds a candidate (e.g. a baseline's group that the caps dropped) unless present; its index.
  size_t add(Candidate c);
  // What the caps cut ("12 candidates over max_depth 8 dropped").
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  friend CandidateSet collect_candidates(const Graph&, const GraphReachability&,
                                         const std::vector<const Backend*>&,
                                         const CandidateOptions&);
  std::vector<Candidate> all_;
  std::vector<std::vector<size_t>> by_first_;
  std::map<NodeSet, std::vector<size_t>> by_nodes_;
  std::vector<std::string> notes_;
};

// Every convex candidate of each of `backends` (Backend::candidates), identical (nodes, backend)
// pairs once, with the caps of `options` applied.
CandidateSet collect_candidates(const Graph& g, const GraphReachability& reach,
                                const std::vector<const Backend*>& backends,
                                const CandidateOptions& options);

}  // namespace collage
