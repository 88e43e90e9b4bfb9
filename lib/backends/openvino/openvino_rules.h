// The openvino backend's candidates: single nodes, anchor + elementwise chains, maximal convex
// regions of the nodes OpenVINO runs, and those regions without their first or last layers.
#pragma once

#include <vector>

#include "collage/backend.h"

namespace collage::openvino_backend {

// Per node of `g`: whether the backend can run it: an operator with an ONNX form, no empty or i8
// value, and none of the attribute variants OpenVINO computes differently (ceil-mode pooling
// windows ONNX drops, some Resize modes).
std::vector<bool> supported_nodes(const Graph& g);

// Whether every node of `s` is one OpenVINO removes (Identity, Dropout): a group of only those
// would return its input unchanged, which OpenVINO does not copy into the output.
bool only_pass_through(const Graph& g, const NodeSet& s);

// Every supported node alone, but for Identity and Dropout (a group of nothing else would return
// its input unchanged, which OpenVINO does not copy).
std::vector<NodeSet> single_nodes(const Graph& g, const std::vector<bool>& supported);

// Each supported node followed along its single-use chain by elementwise / broadcast operators,
// every prefix of up to options.max_depth nodes that stays convex.
std::vector<NodeSet> chains(const Graph& g, const GraphReachability& reach,
                            const RuleOptions& options, const std::vector<bool>& supported);

// Maximal convex regions of supported nodes, grown in topological order along dataflow edges;
// regions of one node are left to single_nodes. The whole graph when every node is supported.
std::vector<NodeSet> regions(const Graph& g, const GraphReachability& reach,
                             const std::vector<bool>& supported);

// Registers the four rules on `b` (openvino.op, openvino.chain, openvino.region, and
// openvino.region_end: the regions without their first or last layers, region_ends.h).
void add_openvino_rules(Backend& b);

}  // namespace collage::openvino_backend
