// End-to-end model tests: each exported model is imported, optimised and run by the reference
// executor, and its outputs are compared with ONNX Runtime's (tests/models/build_models.sh makes
// the models and references; scripts/test runs it first).
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>

#include "collage/npz.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/reference.h"
#include "common/test_util.h"

namespace fs = std::filesystem;
using namespace collage;

namespace {

// Outputs are compared by the largest absolute difference relative to the largest magnitude of
// the expected output (element-wise relative error is meaningless for values that are ~0 after
// thousands of accumulations in different orders).
void check_model(const std::string& name, double rtol = 1e-4) {
  fs::path dir = testing::model_cache_dir();
  fs::path model = dir / (name + ".onnx");
  INFO("model " << model.string());
  if (!fs::exists(model))
    FAIL("missing " << model.string() << ": run scripts/test (or tests/models/build_models.sh)");
  Context ctx;
  auto g = import_onnx_file(ctx, model);
  REQUIRE(g.ok());
  auto opt = run_passes(ctx, *g);
  INFO(opt.status().ToString());
  REQUIRE(opt.ok());
  auto inputs = read_npz(dir / (name + ".inputs.npz"));
  REQUIRE(inputs.ok());
  auto expected = read_npz(dir / (name + ".outputs.npz"));
  REQUIRE(expected.ok());

  std::vector<Tensor> feed;
  for (ValueId in : opt->inputs()) {
    const std::string& in_name = opt->value(in).name;
    auto it = std::find_if(inputs->begin(), inputs->end(),
                           [&](const auto& p) { return p.first == in_name; });
    INFO("input " << in_name);
    REQUIRE(it != inputs->end());
    feed.push_back(it->second);
  }
  auto start = std::chrono::steady_clock::now();
  auto outs = run_reference(*opt, feed);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  WARN(name << ": reference run " << secs << " s, " << opt->nodes().size() << " nodes");
  REQUIRE(outs->size() == opt->outputs().size());
  for (size_t i = 0; i < outs->size(); ++i) {
    const std::string& out_name = opt->value(opt->outputs()[i]).name;
    auto it = std::find_if(expected->begin(), expected->end(),
                           [&](const auto& p) { return p.first == out_name; });
    INFO("output " << out_name);
    REQUIRE(it != expected->end());
    double err = testing::max_scaled_error((*outs)[i], it->second);
    INFO(testing::describe_mismatch((*outs)[i], it->second));
    CHECK(err <= rtol);
  }
}

}  // namespace

#define COLLAGE_MODEL_TEST(name, tag) \
  TEST_CASE(name, tag) { check_model(name); }

COLLAGE_MODEL_TEST("resnet50_small", "[small]")
COLLAGE_MODEL_TEST("mobilenetv2_small", "[small]")
COLLAGE_MODEL_TEST("resnext50_small", "[small]")
COLLAGE_MODEL_TEST("googlenet_small", "[small]")
COLLAGE_MODEL_TEST("dcgan_small", "[small]")
COLLAGE_MODEL_TEST("bert_small", "[small]")

COLLAGE_MODEL_TEST("resnet50", "[full]")
COLLAGE_MODEL_TEST("mobilenetv2", "[full]")
COLLAGE_MODEL_TEST("resnext50", "[full]")
COLLAGE_MODEL_TEST("googlenet", "[full]")
COLLAGE_MODEL_TEST("dcgan", "[full]")
COLLAGE_MODEL_TEST("bert", "[full]")
