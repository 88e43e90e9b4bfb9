// Regions without their first or last nodes, cut where one value crosses.
#include "backends/openvino/region_ends.h"

#include <algorithm>
#include <optional>
#include <set>

#include "backends/openvino/openvino_rules.h"

namespace collage::openvino_backend {
namespace {

// Each candidate is a compile of nearly the whole region when it is measured (seconds for a
// large model): the three nearest cuts of each end, and at the start one cut past each of
// kFarCuts nodes.
constexpr size_t kMaxCutsPerEnd = 3;
// Where ONNX Runtime leads OpenVINO it is often over a model's first blocks, not its first layer
// (on an AVX2 host: EfficientNet-B0's stem and first stages, its first 72 nodes; Inception-v3's
// stem up to its second MaxPool, 12 nodes, 16.3 ms against 19.3; bench/RESULTS.md), so the
// cuts at a region's start also reach past these many nodes, as long as the part kept is at
// least half of the region. Its last layers are the classifier's few nodes.
constexpr size_t kFarCuts[] = {8, 12, 16, 24, 32, 48, 64};

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

// The region `nodes` without its first k nodes (keep_tail) or its last k, when the cut qualifies.
std::optional<NodeSet> cut_region(const Graph& g, const std::vector<NodeId>& nodes, size_t k,
                                  bool keep_tail) {
  const size_t m = nodes.size();
  const size_t cut = keep_tail ? k : m - k;
  if (parts_epilogue(g, nodes, cut)) return std::nullopt;
  const size_t n = g.nodes().size();
  NodeSet head = NodeSet::of(n, {}), tail = NodeSet::of(n, {});
  for (size_t i = 0; i < m; ++i) (i < cut ? head : tail).insert(nodes[i]);
  if (crossing_values(g, head, tail) > 1) return std::nullopt;
  NodeSet kept = keep_tail ? std::move(tail) : std::move(head);
  if (kept.count() < 2 || only_pass_through(g, kept)) return std::nullopt;
  return kept;
}

}  // namespace

std::vector<NodeSet> region_ends(const Graph& g, const std::vector<NodeSet>& regions,
                                 const RuleOptions& options) {
  std::vector<NodeSet> out;
  const auto add = [&](NodeSet kept) {
    if (std::find(out.begin(), out.end(), kept) == out.end()) out.push_back(std::move(kept));
  };
  for (const NodeSet& region : regions) {
    const std::vector<NodeId> nodes = region.to_vector();  // ascending ids: topological order
    const size_t m = nodes.size();
    // Cut after the first k nodes (keep the suffix), then before the last k (keep the prefix).
    for (const bool keep_tail : {true, false}) {
      size_t made = 0;
      for (size_t k = 1; k <= static_cast<size_t>(options.max_depth) && k < m &&
                         made < kMaxCutsPerEnd;
           ++k)
        if (std::optional<NodeSet> kept = cut_region(g, nodes, k, keep_tail)) {
          add(*std::move(kept));
          ++made;
        }
      if (!keep_tail) continue;
      // The first cut past each far distance (one scan: a cut found for one distance may
      // serve the next ones too).
      size_t k = kFarCuts[0];
      for (const size_t far : kFarCuts) {
        for (k = std::max(k, far); 2 * k <= m; ++k)
          if (std::optional<NodeSet> kept = cut_region(g, nodes, k, keep_tail)) {
            add(*std::move(kept));
            break;
          }
      }
    }
  }
  return out;
}

}  // namespace collage::openvino_backend
