// The width-reduced test models placed with single:native, compiled and run by the in-process
// executor, against run_reference on the same graph. dcgan_small (ConvTranspose, BatchNorm, Relu,
// Tanh) and every other small model run on native alone (conv/dense from the TE library).
#include <catch2/catch.hpp>

#include "collage/backends/native.h"
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
  REQUIRE(register_native_backend(backends).ok());
  auto placement = place_baseline("single:native", *g, backends);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  size_t native_nodes = 0, native_groups = 0;
  for (const PlacedGroup& group : placement->groups)
    if (group.backend == kNativeBackend) {
      native_nodes += group.nodes.count();
      ++native_groups;
    }
  WARN(name << ": native runs " << native_nodes << " of " << g->nodes().size() << " nodes in "
            << native_groups << " kernels");
  CHECK(native_nodes == g->nodes().size());

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
    // Deep networks add up summation-order differences (blocked reductions): 3e-4 of the scale.
    CHECK(max_scaled_error((*outputs)[i], (*expected)[i]) <= 3e-4);
  }
}

}  // namespace

TEST_CASE("native models: dcgan_small", "[native][models]") {
  check_model("dcgan_small");
}
TEST_CASE("native models: bert_small", "[native][models]") {
  check_model("bert_small");
}
TEST_CASE("native models: resnet50_small", "[native][models]") {
  check_model("resnet50_small");
}
TEST_CASE("native models: mobilenetv2_small", "[native][models]") {
  check_model("mobilenetv2_small");
}
TEST_CASE("native models: resnext50_small", "[native][models]") {
  check_model("resnext50_small");
}
TEST_CASE("native models: googlenet_small", "[native][models]") {
  check_model("googlenet_small");
}
TEST_CASE("native models: inceptionv3_small", "[native][models]") {
  check_model("inceptionv3_small");
}
TEST_CASE("native models: squeezenet_small", "[native][models]") {
  check_model("squeezenet_small");
}
