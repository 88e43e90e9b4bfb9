// The post-op chains the dnnl conformance tests append to every anchor: each single post-op the
// backend fuses, and combinations of them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dnnl_test_util.h"

namespace collage::testing {

struct PostOpCase {
  std::string name;
  // Appends the post-op(s) to value v (of rank >= 2 for channel-wise cases) and returns the result.
  std::function<ValueId(TestGraph&, ValueId)> apply;
  bool channelwise = false;  // needs a channel axis 1 (BatchNormalization, per-channel operands)
  double tolerance = 1e-4;   // relative error bound (see check_dnnl_graph)
  // Two fused eltwise functions of one kind with different parameters, which oneDNN 2.6 computes
  // wrongly: the backend must refuse the group.
  bool refused = false;
};

// check_dnnl_graph, or for a refused case: the whole graph is not offered and does not build.
void check_post_op_case(const TestGraph& t, const Graph& g, const PostOpCase& p);

// Every single post-op kind.
std::vector<PostOpCase> single_post_ops();
// Chains of two and three post-ops covering every pair of the main kinds.
std::vector<PostOpCase> chained_post_ops();

}  // namespace collage::testing
