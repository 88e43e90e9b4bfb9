// The cuda backend's candidates: chains of the nodes it runs.
#pragma once

#include <vector>

#include "collage/graph.h"
#include "collage/subgraph.h"

namespace collage::cuda_backend {

// From every node check_node() accepts: the node, then the node reading its output when it is
// that output's only reader and accepted too, and so on, up to `max_depth` nodes; every prefix
// of every chain, once. (A longer chain keeps more values on the GPU; placement weighs each
// against its copies.)
std::vector<NodeSet> chains(const Graph& g, int max_depth);

}  // namespace collage::cuda_backend
