// Regions without one of their ends: the candidates that let a mix keep almost all of a model in
// one OpenVINO region and run its first or last layers on another backend.
#pragma once

#include <vector>

#include "collage/backend.h"

namespace collage::openvino_backend {

// Each region of `regions` without its first k or its last k nodes in topological order, k from
// 1 to options.max_depth, the three smallest k of each end that qualify: at most one value
// crosses the cut (a region's topological prefix and suffix are convex when it is), the cut
// does not part an elementwise or broadcast node from the nodes before it (a Relu from its
// convolution), and the part kept has at least two nodes, one of them no pass-through. Without these, OpenVINO's only large candidates are the maximal regions
// themselves, and a placement that moves one layer off OpenVINO must break the rest of the model
// into small OpenVINO regions, losing its fusions.
std::vector<NodeSet> region_ends(const Graph& g, const std::vector<NodeSet>& regions,
                                 const RuleOptions& options);

}  // namespace collage::openvino_backend
