// Candidate collection: per-backend candidates merged, deduplicated, capped and indexed.
#include "placement/candidates.h"

#include <algorithm>
#include <numeric>

#include "core/str_cat.h"

namespace collage {

int CandidateSet::find(const NodeSet& nodes, const Backend* backend) const {
  auto it = by_nodes_.find(nodes);
  if (it == by_nodes_.end()) return -1;
  for (size_t i : it->second)
    if (all_[i].backend == backend) return static_cast<int>(i);
  return -1;
}

std::vector<size_t> CandidateSet::with_nodes(const NodeSet& nodes) const {
  auto it = by_nodes_.find(nodes);
  return it == by_nodes_.end() ? std::vector<size_t>{} : it->second;
}

size_t CandidateSet::add(Candidate c) {
  if (int i = find(c.nodes, c.backend); i >= 0) return static_cast<size_t>(i);
  const size_t index = all_.size();
  by_first_[c.nodes.first()].push_back(index);
  by_nodes_[c.nodes].push_back(index);
  all_.push_back(std::move(c));
  return index;
}

CandidateSet collect_candidates(const Graph& g, const GraphReachability& reach,
                                const std::vector<const Backend*>& backends,
                                const CandidateOptions& options) {
  RuleOptions rules;
  rules.max_depth = options.max_depth;
  struct Entry {
    Candidate c;
    size_t backend_rank;
  };
  std::vector<Entry> entries;
  size_t too_deep = 0;
  // A backend that runs the whole graph as one group (OpenVINO, a plugin compiling whole models)
  // may win only that way: such a candidate is kept whatever the caps, and so is one that
  // leaves out no more than max_depth nodes or covers more than half of the graph (the whole
  // graph but its first or last layers or blocks, which other backends' candidates can cover:
  // a mix that keeps the large group's fusions).
  const auto whole = [&](const Candidate& c) {
    const size_t left_out = g.nodes().size() - c.nodes.count();
    return left_out == 0 ||
           (options.max_depth > 0 && (left_out <= static_cast<size_t>(options.max_depth) ||
                                      2 * c.nodes.count() > g.nodes().size()));
  };
  for (size_t b = 0; b < backends.size(); ++b) {
    for (Candidate& c : backends[b]->candidates(g, reach, rules)) {
      if (options.max_depth > 0 && c.nodes.count() > static_cast<size_t>(options.max_depth) &&
          !whole(c)) {
        ++too_deep;
        continue;
      }
      entries.push_back({std::move(c), b});
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    NodeId fa = a.c.nodes.first(), fb = b.c.nodes.first();
    if (fa != fb) return fa < fb;
    if (a.backend_rank != b.backend_rank) return a.backend_rank < b.backend_rank;
    const size_t ca = a.c.nodes.count(), cb = b.c.nodes.count();
    if (ca != cb) return ca > cb;
    return a.c.nodes < b.c.nodes;
  });
  // Identical (nodes, backend) pairs are adjacent now; the first origin wins.
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const Entry& a, const Entry& b) {
                              return a.c.backend == b.c.backend && a.c.nodes == b.c.nodes;
                            }),
                entries.end());

  CandidateSet set;
  if (too_deep)
    set.notes_.push_back(str_cat(too_deep, " candidates with more than max_depth ",
                                 options.max_depth, " nodes dropped"));
  if (options.max_count > 0 && entries.size() > options.max_count) {
    // Keep the smallest candidates (single nodes must stay so every node can be covered), and
    // the whole-graph (and nearly whole) ones beside them.
    std::vector<size_t> order(entries.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return entries[a].c.nodes.count() < entries[b].c.nodes.count();
    });
    std::vector<bool> keep(entries.size(), false);
    for (size_t i = 0; i < options.max_count; ++i) keep[order[i]] = true;
    for (size_t i = 0; i < entries.size(); ++i)
      if (whole(entries[i].c)) keep[i] = true;
    std::vector<Entry> kept;
    for (size_t i = 0; i < entries.size(); ++i)
      if (keep[i]) kept.push_back(std::move(entries[i]));
    set.notes_.push_back(str_cat(entries.size() - kept.size(), " of ", entries.size(),
                                 " candidates dropped by max_candidates ", options.max_count,
                                 " (largest first)"));
    entries = std::move(kept);
  }
  set.by_first_.resize(g.nodes().size());
  for (Entry& e : entries) set.add(std::move(e.c));
  return set;
}

}  // namespace collage
