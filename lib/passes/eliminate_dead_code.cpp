// Dead-code elimination: liveness from the outputs back, then a rebuild of the live nodes.
#include "passes/eliminate_dead_code.h"

namespace collage::passes {

PassResult eliminate_dead_code(const Context& ctx, const Graph& g) {
  std::vector<bool> live_value(g.values().size(), false);
  for (ValueId out : g.outputs()) live_value[out] = true;
  const auto num_nodes = static_cast<NodeId>(g.nodes().size());
  std::vector<bool> live_node(num_nodes, false);
  // Nodes are in topological order, so one backward sweep sees every reader before its inputs.
  for (NodeId n = num_nodes - 1; n >= 0; --n) {
    const Node& node = g.node(n);
    for (ValueId out : node.outputs) live_node[n] = live_node[n] || live_value[out];
    if (!live_node[n]) continue;
    for (ValueId in : node.inputs)
      if (in != kNoValue) live_value[in] = true;
  }
  bool changed = false;
  for (NodeId n = 0; n < num_nodes; ++n) changed = changed || !live_node[n];
  for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v)
    changed = changed || (g.value(v).kind == ValueKind::constant && !live_value[v]);
  if (!changed) return std::nullopt;

  // The rebuilder copies a constant only when something reads it, which drops the dead ones.
  GraphRebuilder rb(ctx, g);
  for (NodeId n = 0; n < num_nodes; ++n) {
    if (!live_node[n]) continue;
    if (absl::Status s = rb.copy_node(n); !s.ok()) return s;
  }
  auto out = rb.finish();
  if (!out.ok()) return out.status();
  return std::optional<Graph>(std::move(*out));
}

}  // namespace collage::passes
