// Shape inference pass: re-runs every operator's shape inference over a graph.
#pragma once

#include "passes/graph_rebuilder.h"

namespace collage::passes {

// Rebuilds `g` with `ctx`'s operators, inferring each node's output types again. This validates a
// graph built elsewhere (another context, a deserialised graph): an inference error names the node.
// Returns nullopt when every type agrees and every operator already comes from `ctx`.
PassResult infer_shapes(const Context& ctx, const Graph& g);

}  // namespace collage::passes
