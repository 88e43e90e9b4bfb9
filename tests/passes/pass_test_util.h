// Helpers for the pass tests: building small graphs tersely and comparing graphs by running them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collage/graph.h"
#include "common/graph_test_util.h"

namespace collage::testing {

ValueId scalar(GraphBuilder& b, std::string name, float v);

// The operator names of the graph's nodes, in order.
std::vector<std::string> op_names(const Graph& g);

// Runs both graphs with the same random f32 inputs and requires every output of `after` to match
// `before` within `tolerance` (max relative error; elements smaller than 1% of the output's
// largest magnitude are measured against that 1%).
void require_same_outputs(const Graph& before, const Graph& after, double tolerance = 1e-5);

}  // namespace collage::testing
