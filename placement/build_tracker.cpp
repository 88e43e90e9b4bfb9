// BuildTracker: evaluations forwarded, their placements' kernels noted as built with their
// boundary layouts.
#include "placement/build_tracker.h"

#include <algorithm>

namespace collage {

std::vector<ValueId> blocked_boundary(const Graph& g, const NodeSet& nodes,
                                      const std::vector<Layout>& layouts) {
  std::vector<ValueId> out;
  if (layouts.empty()) return out;
  std::vector<bool> is_output(g.values().size(), false);
  for (ValueId v : g.outputs()) is_output[v] = true;
  const auto blocked = [&](ValueId v) {
    return v != kNoValue && static_cast<size_t>(v) < layouts.size() && !layouts[v].plain();
  };
  for (NodeId n : nodes.to_vector()) {
    const Node& node = g.node(n);
    for (ValueId v : node.inputs)
      if (blocked(v) && g.value(v).kind == ValueKind::node_output &&
          !nodes.contains(g.value(v).producer))
        out.push_back(v);
    for (ValueId v : node.outputs) {
      if (!blocked(v)) continue;
      const std::vector<NodeId>& users = g.users()[v];
      if (is_output[v] ||
          std::any_of(users.begin(), users.end(), [&](NodeId u) { return !nodes.contains(u); }))
        out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::StatusOr<double> BuildTracker::latency_ms(const Placement& p) {
  absl::StatusOr<double> ms = inner_.latency_ms(p);
  if (!ms.ok()) return ms;
  const std::vector<Layout> assigned = assign_layouts(ctx_, backends_, g_, p, c_block_);
  for (const PlacedGroup& group : p.groups)
    built_.insert({group.nodes, group.backend, blocked_boundary(g_, group.nodes, assigned)});
  return ms;
}

}  // namespace collage
