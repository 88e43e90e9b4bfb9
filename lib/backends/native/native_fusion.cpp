// The native backend's fusion rule.
#include "backends/native/native_fusion.h"

#include <algorithm>

namespace collage::native {
namespace {

bool is_injective_kind(FusionKind k) {
  return k == FusionKind::elementwise || k == FusionKind::broadcast || k == FusionKind::injective;
}

bool is_graph_output(const Graph& g, ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

// The next node of the chain `set`: the one node outside it that reads a value of the set and no
// value of another such reader (Mul(x, Sigmoid(x)) takes the Sigmoid first, then the Mul). -1 when
// there is none or several, or when a node of the set has several outputs or returns a graph
// output.
NodeId next_node(const Graph& g, const NodeSet& set) {
  std::vector<NodeId> readers;
  for (NodeId n : set.to_vector()) {
    const Node& node = g.node(n);
    if (node.outputs.size() != 1 || is_graph_output(g, node.outputs[0])) return -1;
    for (NodeId u : g.users()[node.outputs[0]])
      if (!set.contains(u) && std::find(readers.begin(), readers.end(), u) == readers.end())
        readers.push_back(u);
  }
  NodeId next = -1;
  for (NodeId u : readers) {
    bool ready = true;
    for (ValueId in : g.node(u).inputs) {
      if (in == kNoValue || g.value(in).kind != ValueKind::node_output) continue;
      const NodeId p = g.value(in).producer;
      ready = ready && std::find(readers.begin(), readers.end(), p) == readers.end();
    }
    if (!ready) continue;
    if (next >= 0) return -1;
    next = u;
  }
  return next;
}

// Whether every value of the set but the last node's is read inside the set only, so that the
// group has one output.
bool closed(const Graph& g, const NodeSet& set, NodeId last) {
  for (NodeId n : set.to_vector()) {
    if (n == last) continue;
    for (NodeId u : g.users()[g.node(n).outputs[0]])
      if (!set.contains(u)) return false;
  }
  return true;
}

}  // namespace

bool may_follow(FusionKind anchor, FusionKind next) {
  if (is_injective_kind(anchor)) return is_injective_kind(next);
  return next == FusionKind::elementwise || next == FusionKind::broadcast;
}

std::vector<NodeSet> fusion_candidates(const Graph& g, const GraphReachability& reach,
                                       const RuleOptions& options,
                                       const std::vector<bool>& supported) {
  const size_t n = g.nodes().size();
  std::vector<NodeSet> out;
  for (NodeId a = 0; a < static_cast<NodeId>(n); ++a)
    if (supported[a]) out.push_back(NodeSet::of(n, {a}));
  for (NodeId a = 0; a < static_cast<NodeId>(n); ++a) {
    if (!supported[a]) continue;
    const FusionKind kind = g.node(a).op->fusion;
    NodeSet set = NodeSet::of(n, {a});
    const Shape& anchor_shape = g.value(g.node(a).outputs[0]).type.shape;
    for (size_t size = 1; static_cast<int>(size) < options.max_depth;) {
      const NodeId u = next_node(g, set);
      if (u < 0 || !supported[u] || !may_follow(kind, g.node(u).op->fusion)) break;
      // After a convolution, matmul, reduction or opaque anchor, a successor that broadcasts the
      // chain's value to a larger result (squeeze-and-excitation's scale times the feature map)
      // would have the anchor recomputed inside every tile of that result: the chain ends there.
      if (!is_injective_kind(kind) && g.value(g.node(u).outputs[0]).type.shape != anchor_shape)
        break;
      set.insert(u);
      ++size;
      if (!reach.is_convex(set)) break;
      if (closed(g, set, u)) out.push_back(set);
    }
  }
  return out;
}

}  // namespace collage::native
