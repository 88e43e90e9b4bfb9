// Regions without their first or last nodes, cut where one value crosses.
#include "backends/openvino/region_ends.h"

#include <algorithm>
#include <set>

#include "backends/openvino/openvino_rules.h"

namespace collage::openvino_backend {
namespace {

// Each candidate is a compile of nearly the whole region when it is measured (seconds for a
// large model): the three nearest cuts of each end.
constexpr size_t kMaxCutsPerEnd = 3;

// The number of distinct values that nodes of `from` produce and nodes of `to` read.
size_t crossing_values(const Graph& g, const NodeSet& from, const NodeSet& to) {
  std::set<ValueId> values;
  for (NodeId m : from.to_vector())
    for (ValueId out : g.node(m).outputs)
      for (NodeId u : g.users()[out])
        if (to.contains(u)) values.insert(out);
  return values.size();
}

// Whether a cut before nodes[i] would part an elementwise or broadcast node from what it follows
// (the Relu of a convolution): a cut OpenVINO's fusions would pay for, and no layer moved.
bool parts_epilogue(const Graph& g, const std::vector<NodeId>& nodes, size_t i) {
  const FusionKind k = g.node(nodes[i]).op->fusion;
  return k == FusionKind::elementwise || k == FusionKind::broadcast;
}

}  // namespace

std::vector<NodeSet> region_ends(const Graph& g, const std::vector<NodeSet>& regions,
                                 const RuleOptions& options) {
  const size_t n = g.nodes().size();
  std::vector<NodeSet> out;
  for (const NodeSet& region : regions) {
    const std::vector<NodeId> nodes = region.to_vector();  // ascending ids: topological order
    const size_t m = nodes.size();
    // Cut after the first k nodes (keep the suffix), then before the last k (keep the prefix).
    for (const bool keep_tail : {true, false}) {
      size_t made = 0;
      for (size_t k = 1; k <= static_cast<size_t>(options.max_depth) && k < m &&
                         made < kMaxCutsPerEnd;
           ++k) {
        const size_t cut = keep_tail ? k : m - k;
        if (parts_epilogue(g, nodes, cut)) continue;
        NodeSet head = NodeSet::of(n, {}), tail = NodeSet::of(n, {});
        for (size_t i = 0; i < m; ++i) (i < cut ? head : tail).insert(nodes[i]);
        if (crossing_values(g, head, tail) > 1) continue;
        NodeSet kept = keep_tail ? std::move(tail) : std::move(head);
        if (kept.count() < 2 || only_pass_through(g, kept) ||
            std::find(out.begin(), out.end(), kept) != out.end())
          continue;
        out.push_back(std::move(kept));
        ++made;
      }
    }
  }
  return out;
}

}  // namespace collage::openvino_backend
