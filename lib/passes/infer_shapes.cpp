// Shape inference pass: rebuilds the graph node by node and compares the inferred types.
#include "passes/infer_shapes.h"

namespace collage::passes {

PassResult infer_shapes(const Context& ctx, const Graph& g) {
  GraphRebuilder rb(ctx, g);
  bool changed = false;
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
    const Node& node = g.node(n);
    if (absl::Status s = rb.copy_node(n); !s.ok()) return s;
    if (ctx.ops().find(node.op_name()) != node.op) changed = true;
    for (ValueId out : node.outputs)
      if (rb.builder().value(rb.map(out)).type != g.value(out).type) changed = true;
  }
  auto out = rb.finish();
  if (!out.ok()) return out.status();
  if (!changed) return std::nullopt;
  return std::optional<Graph>(std::move(*out));
}

}  // namespace collage::passes
