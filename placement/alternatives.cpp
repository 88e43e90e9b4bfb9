// The competitors of a chosen group, cheapest first.
#include "placement/alternatives.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/str_cat.h"

namespace collage {
namespace {

constexpr size_t kMaxAlternatives = 6;

// The first three names of `nodes` and how many more ("a, b, c and 4 more").
std::string node_list(const Graph& g, const NodeSet& nodes) {
  std::string s;
  std::vector<NodeId> v = nodes.to_vector();
  for (size_t i = 0; i < v.size() && i < 3; ++i) s += str_cat(i ? ", " : "", g.node(v[i]).name);
  if (v.size() > 3) s += str_cat(" and ", v.size() - 3, " more");
  return s;
}

}  // namespace

std::vector<Alternative> alternatives_of(const Graph& g, const CandidateSet& cands,
                                         const std::vector<CandidateCost>& costs, size_t chosen) {
  const NodeSet& nodes = cands[chosen].nodes;
  std::vector<size_t> rivals;
  for (size_t c : cands.starting_at(nodes.first()))
    if (c != chosen) rivals.push_back(c);
  std::stable_sort(rivals.begin(), rivals.end(), [&](size_t a, size_t b) {
    const bool sa = cands[a].nodes == nodes, sb = cands[b].nodes == nodes;
    if (sa != sb) return sa;
    const double ca = costs[a].total() < 0 ? INFINITY : costs[a].total();
    const double cb = costs[b].total() < 0 ? INFINITY : costs[b].total();
    return ca < cb;
  });
  std::vector<Alternative> out;
  for (size_t i = 0; i < rivals.size() && out.size() < kMaxAlternatives; ++i) {
    const size_t c = rivals[i];
    Alternative a;
    a.backend = cands[c].backend->name();
    a.origin = cands[c].origin;
    a.cost_ms = costs[c].kernel_ms;
    if (!costs[c].error.empty())
      a.note = costs[c].error;
    else if (cands[c].nodes == nodes)
      a.note = "same nodes";
    else
      a.note = str_cat("covers ", node_list(g, cands[c].nodes));
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace collage
