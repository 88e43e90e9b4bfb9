// Constant folding: evaluates at compile time what depends only on constants and static shapes.
#pragma once

#include <cstddef>

#include "passes/graph_rebuilder.h"

namespace collage::passes {

struct FoldConstantsOptions {
  // A node whose outputs would be larger than this is not evaluated.
  size_t max_folded_bytes = size_t{64} << 20;
  // A folded value becomes a constant only if it is no larger than the constants it is computed
  // from, or than this. A larger one (Expand, Tile, ConstantOfShape of a big shape) keeps the
  // node that computes it, so folding never grows the model much; it still feeds the folding of
  // its consumers.
  size_t growth_allowance_bytes = size_t{64} << 10;
};

// Replaces every node whose inputs are all constants, and every shape-only node (Shape), by the
// constants it computes, with the operators' reference kernels. Nodes are visited in topological
// order and folded values feed the next nodes, so chains such as Shape -> Gather -> Concat collapse
// in one sweep. A node whose evaluation fails is kept as it is (the error shows when it runs).
// Returns nullopt when nothing was folded.
PassResult fold_constants(const Context& ctx, const Graph& g, const FoldConstantsOptions& options = {});

}  // namespace collage::passes
