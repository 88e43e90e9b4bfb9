// Helpers for the pass tests.
#include "passes/pass_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "collage/reference.h"
#include "common/test_util.h"

namespace collage::testing {

ValueId scalar(GraphBuilder& b, std::string name, float v) {
  return b.add_constant(std::move(name), Tensor::scalar_f32(v));
}

std::vector<std::string> op_names(const Graph& g) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes()) names.push_back(n.op_name());
  return names;
}

void require_same_outputs(const Graph& before, const Graph& after, double tolerance) {
  REQUIRE(before.inputs().size() == after.inputs().size());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < before.inputs().size(); ++i) {
    const TensorType& t = before.value(before.inputs()[i]).type;
    REQUIRE(t.dtype == DType::f32);
    inputs.push_back(random_f32(t.shape, 1000 + i, -2.f, 2.f));
  }
  auto expected = run_reference(before, inputs);
  INFO(expected.status().ToString());
  REQUIRE(expected.ok());
  auto actual = run_reference(after, inputs);
  INFO(actual.status().ToString());
  REQUIRE(actual.ok());
  REQUIRE(actual->size() == expected->size());
  for (size_t i = 0; i < actual->size(); ++i) {
    const Tensor& e = (*expected)[i];
    double scale = 0;
    for (int64_t k = 0; k < e.numel(); ++k) scale = std::max(scale, std::fabs(e.get_as_double(k)));
    // Reordered float arithmetic errs by a few ulps of the intermediate values, which are of the
    // output's scale, so elements near zero are measured against 1% of that scale.
    const double floor = std::max(1e-3, 1e-2 * scale);
    INFO("output " << i << ": " << describe_mismatch((*actual)[i], e, floor));
    CHECK(max_relative_error((*actual)[i], e, floor) <= tolerance);
  }
}

}  // namespace collage::testing
