// The native backend's fusion rule.
#include "backends/native/native_fusion.h"

#include <algorithm>

namespace collage::native {
namespace {

bool is_injective_kind(FusionKind k) {
  return k == FusionKind::elementwise || k == FusionKind::broadcast || k == FusionKind::injective;
}

// The one node reading n's single output, or -1 when n's result leaves the chain another way.
NodeId single_user(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (node.outputs.size() != 1) return -1;
  const ValueId v = node.outputs[0];
  if (std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end()) return -1;
  const std::vector<NodeId>& users = g.users()[v];
  if (users.empty()) return -1;
  for (NodeId u : users)
    if (u != users[0]) return -1;
  return users[0];
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
    size_t size = 1;
    for (NodeId cur = a; static_cast<int>(size) < options.max_depth;) {
      const NodeId u = single_user(g, cur);
      if (u < 0 || !supported[u] || !may_follow(kind, g.node(u).op->fusion)) break;
      // After a convolution, matmul, reduction or opaque anchor, a successor that broadcasts the
      // chain's value to a larger result (squeeze-and-excitation's scale times the feature map)
      // would have the anchor recomputed inside every tile of that result: the chain ends there.
      if (!is_injective_kind(kind) && g.value(g.node(u).outputs[0]).type.shape !=
                                          g.value(g.node(cur).outputs[0]).type.shape)
        break;
      set.insert(u);
      ++size;
      if (!reach.is_convex(set)) break;
      out.push_back(set);
      cur = u;
    }
  }
  return out;
}

}  // namespace collage::native
