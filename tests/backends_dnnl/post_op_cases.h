// Data of the dnnl backend tests: how a dnnl group is checked with the shared harness
// (common/backend_check.h), and the post-op chains appended to every anchor: each single post-op
// the backend fuses, and combinations of them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "common/backend_check.h"

namespace collage::testing {

// The dnnl backend of the tests (one for the process).
const Backend& dnnl_backend();

// How a dnnl group of `t`'s graph `g` is checked: claimed whole, built once, run on t's inputs,
// compared per element with the reference (floor: 1% of the output's largest magnitude, as oneDNN
// sums in another order), and its record needs no further packing of constants when loaded.
GroupCheck dnnl_check(const TestGraph& t, const Graph& g, double tolerance = 1e-4);

struct PostOpCase {
  std::string name;
  // Appends the post-op(s) to value v (of rank >= 2 for channel-wise cases) and returns the result.
  std::function<ValueId(TestGraph&, ValueId)> apply;
  bool channelwise = false;  // needs a channel axis 1 (BatchNormalization, per-channel operands)
  double tolerance = 1e-4;   // relative error bound (see dnnl_check)
  // Two fused eltwise functions of one kind with different parameters, which oneDNN 2.6 computes
  // wrongly: the backend must refuse the group.
  bool refused = false;
};

// check_group with dnnl_check, or for a refused case: the whole graph is not offered and does not
// build.
void check_post_op_case(const TestGraph& t, const Graph& g, const PostOpCase& p);

// Every single post-op kind.
std::vector<PostOpCase> single_post_ops();
// Chains of two and three post-ops covering every pair of the main kinds.
std::vector<PostOpCase> chained_post_ops();

}  // namespace collage::testing
