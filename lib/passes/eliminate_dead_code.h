// Dead-code elimination: drops nodes and constants that no graph output depends on.
#pragma once

#include "passes/graph_rebuilder.h"

namespace collage::passes {

// Removes every node none of whose outputs reaches a graph output, and every constant that no
// remaining node reads and that is no graph output. Graph inputs are kept even when unused: they
// are the graph's interface. Returns nullopt when there is nothing to remove.
PassResult eliminate_dead_code(const Context& ctx, const Graph& g);

}  // namespace collage::passes
