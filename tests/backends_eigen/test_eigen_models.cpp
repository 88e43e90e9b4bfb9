// The width-reduced test models placed with single:eigen (everything else on the reference
// backend), compiled and run by the in-process executor, against run_reference on the same graph.
#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "collage/reference.h"
#include "common/cached_model.h"
#include "common/test_util.h"
#include "placement/baselines.h"

using namespace collage;
using namespace collage::testing;

namespace {

void check_model(const std::string& name) {
  Context ctx;
  std::optional<CachedModel> m = load_cached_model(ctx, name);
  if (!m) return;
  const Graph* g = &m->graph;
  const std::vector<Tensor>& feed = m->inputs;

  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  auto placement = place_baseline("single:eigen", *g, backends);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  size_t eigen_nodes = 0, eigen_groups = 0;
  for (const PlacedGroup& group : placement->groups)
    if (group.backend == kEigenBackend) {
      eigen_nodes += group.nodes.count();
      ++eigen_groups;
    }
  WARN(name << ": eigen runs " << eigen_nodes << " of " << g->nodes().size() << " nodes in "
            << eigen_groups << " kernels");
  CHECK(eigen_nodes > 0);

  auto compiled = compile_placement(ctx, backends, *g, *placement);
  INFO(compiled.status().ToString());
  REQUIRE(compiled.ok());
  auto outputs = compiled->run(feed);
  INFO(outputs.status().ToString());
  REQUIRE(outputs.ok());
  auto expected = run_reference(*g, feed);
  REQUIRE(expected.ok());
  REQUIRE(outputs->size() == expected->size());
  for (size_t i = 0; i < outputs->size(); ++i) {
    INFO("output " << g->value(g->outputs()[i]).name << ": "
                   << describe_mismatch((*outputs)[i], (*expected)[i]));
    CHECK(max_scaled_error((*outputs)[i], (*expected)[i]) <= 1e-4);
  }
}

}  // namespace

TEST_CASE("eigen models: resnet50_small", "[eigen][models]") {
  check_model("resnet50_small");
}
TEST_CASE("eigen models: mobilenetv2_small", "[eigen][models]") {
  check_model("mobilenetv2_small");
}
TEST_CASE("eigen models: resnext50_small", "[eigen][models]") {
  check_model("resnext50_small");
}
TEST_CASE("eigen models: googlenet_small", "[eigen][models]") {
  check_model("googlenet_small");
}
TEST_CASE("eigen models: inceptionv3_small", "[eigen][models]") {
  check_model("inceptionv3_small");
}
TEST_CASE("eigen models: dcgan_small", "[eigen][models]") {
  check_model("dcgan_small");
}
TEST_CASE("eigen models: bert_small", "[eigen][models]") {
  check_model("bert_small");
}
