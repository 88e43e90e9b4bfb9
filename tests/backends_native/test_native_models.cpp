// The width-reduced test models placed with single:native, compiled and run by the in-process
// executor, against run_reference on the same graph. dcgan_small (ConvTranspose, BatchNorm, Relu,
// Tanh) and every other small model run on native alone (conv/dense from the TE library).
#include <catch2/catch.hpp>
#include <filesystem>

#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/npz.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "placement/baselines.h"

namespace fs = std::filesystem;
using namespace collage;
using namespace collage::testing;

namespace {

void check_model(const std::string& name) {
  const fs::path dir = model_cache_dir();
  const fs::path model = dir / (name + ".onnx");
  if (!fs::exists(model)) {
    WARN("skipped: missing " << model.string() << " (tests/models/build_models.sh makes it)");
    return;
  }
  Context ctx;
  auto imported = import_onnx_file(ctx, model);
  INFO(imported.status().ToString());
  REQUIRE(imported.ok());
  auto g = run_passes(ctx, *imported);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto inputs = read_npz(dir / (name + ".inputs.npz"));
  REQUIRE(inputs.ok());
  std::vector<Tensor> feed;
  for (ValueId in : g->inputs()) {
    auto it = std::find_if(inputs->begin(), inputs->end(),
                           [&](const auto& p) { return p.first == g->value(in).name; });
    REQUIRE(it != inputs->end());
    feed.push_back(it->second);
  }

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
