// Regions without their first or last nodes, cut where one value crosses.
#include "backends/openvino/region_ends.h"

#include <algorithm>
#include <set>
#include <string_view>

namespace collage::openvino_backend {
namespace {

// The number of distinct values that nodes of `from` produce and nodes of `to` read.
size_t crossing_values(const Graph& g, const NodeSet& from, const NodeSet& to) {
  std::set<ValueId> values;
  for (NodeId m : from.to_vector())
    for (ValueId out : g.node(m).outputs)
      for (NodeId u : g.users()[out])
        if (to.contains(u)) values.insert(out);
  return values.size();
}

bool keeps_work(const Graph& g, const std::vector<NodeId>& nodes, size_t begin, size_t end) {
  if (end - begin < 2) return false;
  for (size_t i = begin; i < end; ++i) {
    const std::string_view op = g.node(nodes[i]).op_name();
    if (op != "Identity" && op != "Dropout") return true;
  }
  return false;
}

}  // namespace

std::vector<NodeSet> region_ends(const Graph& g, const std::vector<NodeSet>& regions,
                                 const RuleOptions& options) {
  const size_t n = g.nodes().size();
  std::vector<NodeSet> out;
  for (const NodeSet& region : regions) {
    const std::vector<NodeId> nodes = region.to_vector();  // ascending ids: topological order
    const size_t m = nodes.size();
    for (size_t k = 1; k <= static_cast<size_t>(options.max_depth) && k < m; ++k) {
      // Cut after the first k nodes (keep the suffix) and before the last k (keep the prefix).
      for (size_t cut : {k, m - k}) {
        NodeSet head = NodeSet::of(n, {}), tail = NodeSet::of(n, {});
        for (size_t i = 0; i < m; ++i) (i < cut ? head : tail).insert(nodes[i]);
        if (crossing_values(g, head, tail) > 1) continue;
        const bool keep_tail = cut == k;
        if (!(keep_tail ? keeps_work(g, nodes, cut, m) : keeps_work(g, nodes, 0, cut))) continue;
        NodeSet kept = keep_tail ? tail : head;
        if (std::find(out.begin(), out.end(), kept) == out.end()) out.push_back(std::move(kept));
      }
    }
  }
  return out;
}

}  // namespace collage::openvino_backend
