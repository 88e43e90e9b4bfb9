// scikit-learn models with the ai.onnx.ml linear and SVM operators, Normalizer and ZipMap,
// converted by skl2onnx (tests/ml/make_ml_models.py), with their nodes' every post_transform:
// compiled by the normal placement into artifacts, run through the runtime C API and matching
// ONNX Runtime (labels exactly, scores and probabilities to 1e-4 relative).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "collage/compiler.h"
#include "collage/npz.h"
#include "common/ort_outputs.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"

namespace collage {
namespace {

struct MlCase {
  std::string name;
  std::filesystem::path model, arrays;
  ZipMapMode zipmap = ZipMapMode::refuse;
};

std::vector<MlCase> ml_cases() {
  const auto dir = testing::test_data_dir() / "ml";
  std::ifstream in(dir / "manifest.txt");
  if (!in)
    FAIL("no ai.onnx.ml test data in " << dir.string()
                                       << ": run scripts/test, or .venv/bin/python "
                                          "tests/ml/make_ml_models.py "
                                       << dir.string());
  std::vector<MlCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    MlCase c;
    std::string model, arrays, zipmap;
    if (!(words >> c.name >> model >> arrays >> zipmap)) continue;
    c.model = dir / model;
    c.arrays = dir / arrays;
    c.zipmap = zipmap == "probabilities" ? ZipMapMode::probabilities : ZipMapMode::refuse;
    cases.push_back(std::move(c));
  }
  REQUIRE(cases.size() >= 40);
  return cases;
}

CompileOptions greedy_options(ZipMapMode zipmap) {
  // Greedy: what each backend claims, without measuring on a busy machine.
  CompileOptions o;
  o.placement.strategy = "greedy";
  o.placement.num_threads = 1;
  o.placement.executor = PlacementExecutor::sequential;
  o.tree_strategy.measured = false;
  o.import.onnx.zipmap = zipmap;
  return o;
}

// `got` equals ONNX Runtime's `want`: strings and integers exactly, floats to 1e-4 relative
// (NaN and infinities alike). Near 0.5 ONNX Runtime's float32 PROBIT cancels (sqrt(v^2 - l / a)
// - v with v > 0) and is up to 2e-4 off the formula, which collage computes without the
// cancellation: PROBIT scores (`probit` cases) are compared to 3e-4 absolute.
void check_matches(const Tensor& got, const Tensor& want, const std::string& name,
                   bool probit) {
  if (probit)
    testing::check_matches_ort(got, want, name, 3e-4f);
  else
    testing::check_matches_ort(got, want, name, 1e-4f, 1e-4f);
}

TEST_CASE("skl2onnx linear and SVM models compile and match ONNX Runtime", "[driver][ml]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  for (const MlCase& c : ml_cases()) {
    INFO(c.name);
    auto arrays = read_npz(c.arrays);
    REQUIRE(arrays.ok());
    auto [named_inputs, expected] = testing::split_ort_arrays(*std::move(arrays));
    std::vector<Tensor> inputs;
    for (auto& [name, t] : named_inputs) inputs.push_back(std::move(t));
    auto r = compiler->compile(ModelSource::file(c.model), greedy_options(c.zipmap));
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    collage_module_t* raw = nullptr;
    REQUIRE(testing::take_message(collage_module_load_memory(
                r->artifact.data(), r->artifact.size(), nullptr, &raw)) == "");
    testing::ModulePtr m(raw);
    std::string message;
    const std::vector<Tensor> got = testing::run_module_outputs(m.get(), inputs, &message);
    INFO(message);
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i)
      check_matches(got[i], expected[i].second, expected[i].first,
                    c.name.find("probit") != std::string::npos);
  }
}

TEST_CASE("a ZipMap is refused, naming the node and the option, unless asked to drop it",
          "[driver][ml]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  const auto model = testing::test_data_dir() / "ml" / "zipmap_logreg.onnx";
  CompileOptions o = greedy_options(ZipMapMode::refuse);
  o.artifact = false;
  auto refused = compiler->compile(ModelSource::file(model), o);
  REQUIRE(refused.status().code() == absl::StatusCode::kUnimplemented);
  const std::string message(refused.status().message());
  CHECK(message.find("ZipMap 'ZipMap'") != std::string::npos);
  CHECK(message.find("--zipmap probabilities") != std::string::npos);
  o.import.onnx.zipmap = ZipMapMode::probabilities;
  auto dropped = compiler->compile(ModelSource::file(model), o);
  INFO(dropped.status().ToString());
  REQUIRE(dropped.ok());
  const Graph& g = dropped->graph;
  REQUIRE(g.outputs().size() == 2);
  CHECK(type_to_string(g.value(g.outputs()[1]).type) == "f32[24x4]");
  CHECK(g.value(g.outputs()[1]).name == "output_probability");  // ZipMap's output, by name
}

}  // namespace
}  // namespace collage
