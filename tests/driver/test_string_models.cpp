// scikit-learn pipelines with strings, converted by skl2onnx (tests/strings/make_string_models.py):
// a random forest with string class labels and a LabelEncoder behind a StringNormalizer, compiled
// by the normal placement into artifacts, run through the runtime C API with string inputs and
// outputs, and matching ONNX Runtime's outputs (strings and integers exactly, probabilities to
// 1e-5); the string nodes run on the strings backend, the trees on their own.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "collage/compiler.h"
#include "collage/npz.h"
#include "common/runtime_c_util.h"
#include "common/ort_outputs.h"
#include "common/test_util.h"

namespace collage {
namespace {

struct StringCase {
  std::string name;
  std::filesystem::path model, arrays;
};

std::vector<StringCase> string_cases() {
  const auto dir = testing::test_data_dir() / "strings";
  std::ifstream in(dir / "manifest.txt");
  if (!in)
    FAIL("no string-model test data in " << dir.string()
                                          << ": run scripts/test, or .venv/bin/python "
                                             "tests/strings/make_string_models.py "
                                          << dir.string());
  std::vector<StringCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    StringCase c;
    std::string model, arrays;
    if (!(words >> c.name >> model >> arrays)) continue;
    c.model = dir / model;
    c.arrays = dir / arrays;
    cases.push_back(std::move(c));
  }
  REQUIRE(cases.size() == 2);
  return cases;
}

TEST_CASE("skl2onnx pipelines with strings compile and match ONNX Runtime", "[driver][strings]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  for (const StringCase& c : string_cases()) {
    INFO(c.name);
    auto arrays = read_npz(c.arrays);
    REQUIRE(arrays.ok());
    auto [named_inputs, expected] = testing::split_ort_arrays(*std::move(arrays));
    std::vector<Tensor> inputs;
    for (auto& [name, t] : named_inputs) inputs.push_back(std::move(t));
    // Greedy and the fixed tree strategy: what each backend claims, without measuring it on a
    // busy machine (the measured placement is `collage compile`'s, tests/tools).
    CompileOptions o;
    o.placement.strategy = "greedy";
    o.placement.num_threads = 1;
    o.placement.executor = PlacementExecutor::sequential;
    o.tree_strategy.measured = false;
    auto r = compiler->compile(ModelSource::file(c.model), o);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    bool on_strings = false;
    for (const PlacedGroup& group : r->optimized.placement.groups)
      on_strings = on_strings || group.backend == "strings";
    CHECK(on_strings);

    collage_module_t* raw = nullptr;
    REQUIRE(testing::take_message(collage_module_load_memory(
                r->artifact.data(), r->artifact.size(), nullptr, &raw)) == "");
    testing::ModulePtr m(raw);
    std::string message;
    const std::vector<Tensor> got = testing::run_module_outputs(m.get(), inputs, &message);
    INFO(message);
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i)
      testing::check_matches_ort(got[i], expected[i].second, expected[i].first, 1e-5f);
  }
}

}  // namespace
}  // namespace collage
