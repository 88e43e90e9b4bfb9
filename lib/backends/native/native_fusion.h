// The native backend's fusion rule (Collage's default pattern generator, TVM's fusion kinds): a
// single-node candidate per supported node, and each anchor extended along its chain of readers
// while the successors' fusion kinds allow it.
#pragma once

#include <vector>

#include "collage/backend.h"
#include "collage/subgraph.h"

namespace collage::native {

// Whether `next` may follow a chain that starts at an operator of kind `anchor`: after a
// convolution or matmul (out_elementwise_fusable), a reduction or an opaque operator, only
// elementwise and broadcast operators; after an injective chain, any injective operator.
bool may_follow(FusionKind anchor, FusionKind next);

// Candidates in g: {n} for every node with supported[n], then for each such node the chains
// n -> u1 -> u2 ... of 2..max_depth nodes: each u the one node outside the chain that reads a
// chain value and no value of another such reader (so x -> Sigmoid -> Mul(x, .) is a chain: SiLU),
// supported and allowed by may_follow, and, after an anchor that is not injective, of the
// anchor's shape. A chain is a candidate when all its values but the last one's are read inside
// it and none is a graph output (the group has one output). Deterministic order.
std::vector<NodeSet> fusion_candidates(const Graph& g, const GraphReachability& reach,
                                       const RuleOptions& options,
                                       const std::vector<bool>& supported);

}  // namespace collage::native
