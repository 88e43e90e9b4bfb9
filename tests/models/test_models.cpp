// End-to-end model tests: one test case per model of the manifest that tests/models/build_models.sh
// writes (models.json in the model cache): each model is imported, optimised and run by the
// reference executor, and its outputs must match ONNX Runtime's within the model's own rtol.
// Test cases are registered at start-up from the manifest, tagged with the model's label ([small]
// or [full]), so a model added to export_models.py needs no change here.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "collage/npz.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/reference.h"
#include "common/test_util.h"

namespace fs = std::filesystem;
using namespace collage;

namespace {

struct ModelSpec {
  std::string name, label;
  double rtol = 1e-4;
  // The shapes of the inputs the references were made with: a model exported with symbolic
  // dimensions imports with them.
  std::map<std::string, Shape> shapes;
};

// Outputs are compared by the largest absolute difference relative to the largest magnitude of
// the expected output (element-wise relative error is meaningless for values that are ~0 after
// thousands of accumulations in different orders).
void check_model(const ModelSpec& spec) {
  fs::path dir = testing::model_cache_dir();
  fs::path model = dir / (spec.name + ".onnx");
  INFO("model " << model.string() << ", rtol " << spec.rtol);
  if (!fs::exists(model))
    FAIL("missing " << model.string() << ": run scripts/test (or tests/models/build_models.sh)");
  Context ctx;
  OnnxImportOptions options;
  options.input_shapes = spec.shapes;
  auto g = import_onnx_file(ctx, model, options);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto opt = run_passes(ctx, *g);
  INFO(opt.status().ToString());
  REQUIRE(opt.ok());
  auto inputs = read_npz(dir / (spec.name + ".inputs.npz"));
  REQUIRE(inputs.ok());
  auto expected = read_npz(dir / (spec.name + ".outputs.npz"));
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
  WARN(spec.name << ": reference run " << secs << " s, " << opt->nodes().size() << " nodes");
  REQUIRE(outs->size() == opt->outputs().size());
  for (size_t i = 0; i < outs->size(); ++i) {
    const std::string& out_name = opt->value(opt->outputs()[i]).name;
    auto it = std::find_if(expected->begin(), expected->end(),
                           [&](const auto& p) { return p.first == out_name; });
    INFO("output " << out_name);
    REQUIRE(it != expected->end());
    double err = testing::max_scaled_error((*outs)[i], it->second);
    INFO(testing::describe_mismatch((*outs)[i], it->second));
    CHECK(err <= spec.rtol);
  }
}

class ModelTest : public Catch::ITestInvoker {
 public:
  explicit ModelTest(ModelSpec spec) : spec_(std::move(spec)) {}
  void invoke() const override { check_model(spec_); }

 private:
  ModelSpec spec_;
};

// Fails: there is no manifest to take the models from.
class MissingManifest : public Catch::ITestInvoker {
 public:
  explicit MissingManifest(std::string why) : why_(std::move(why)) {}
  void invoke() const override { FAIL(why_); }

 private:
  std::string why_;
};

// The models of the manifest, in its order; `error` says why there are none when it is missing or
// malformed.
std::vector<ModelSpec> read_manifest(const fs::path& path, std::string* error) {
  std::ifstream f(path);
  if (!f) {
    *error = path.string() +
             " is missing: run tests/models/build_models.sh --small (scripts/test does), then "
             "rebuild (the build registers one test per model of the manifest)";
    return {};
  }
  std::vector<ModelSpec> specs;
  try {
    const nlohmann::json j = nlohmann::json::parse(f);
    for (const auto& m : j.at("models")) {
      std::map<std::string, Shape> shapes;
      for (const auto& in : m.value("inputs", nlohmann::json::array()))
        shapes[in.at("name").get<std::string>()] = in.at("shape").get<Shape>();
      specs.push_back({m.at("name").get<std::string>(), m.at("label").get<std::string>(),
                       m.value("rtol", 1e-4), std::move(shapes)});
    }
  } catch (const nlohmann::json::exception& e) {
    *error = path.string() + ": malformed manifest: " + e.what();
    return {};
  }
  return specs;
}

// Registers a test case; Catch takes ownership of `invoker` and copies the name and tags.
void register_test(Catch::ITestInvoker* invoker, const std::string& name, const std::string& tags) {
  Catch::getMutableRegistryHub().registerTest(Catch::makeTestCase(
      invoker, "", Catch::NameAndTags{name, tags}, Catch::SourceLineInfo(__FILE__, __LINE__)));
}

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  std::vector<ModelSpec> specs =
      read_manifest(testing::model_cache_dir() / "models.json", &error);
  if (!error.empty()) {
    register_test(new MissingManifest(error), "models.json", "[small]");
    register_test(new MissingManifest(error), "models.json (full-size models)", "[full]");
  }
  for (ModelSpec& spec : specs) {
    const std::string name = spec.name, tags = "[" + spec.label + "]";
    register_test(new ModelTest(std::move(spec)), name, tags);
  }
  return Catch::Session().run(argc, argv);
}
