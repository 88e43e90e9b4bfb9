// Batch ranges for plans with data-dependent shapes and strings (tests/batch/make_batch_models.py):
// each model compiled for batches 1 to 6 through the C API (collage_compile_file) and through
// `collage compile`, then run at batches 1, 3 and 6 through the runtime's C API and `collage run`,
// matching ONNX Runtime run at the same batch (f32 to 1e-4, integers and strings exactly); a
// batch outside the range is refused.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "collage/collage.h"
#include "collage/npz.h"
#include "common/ort_outputs.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"
#include "tools/cli_test_util.h"

namespace collage {
namespace {

using testing::TempDir;

struct BatchRun {
  int64_t batch;
  std::vector<std::pair<std::string, Tensor>> inputs, expected;
};

struct BatchCase {
  std::string name;
  std::filesystem::path model;
  int64_t min = 0, max = 0;
  std::vector<BatchRun> runs;  // ascending batches
};

std::vector<BatchCase> batch_cases() {
  const auto dir = testing::test_data_dir() / "batch";
  std::ifstream in(dir / "manifest.txt");
  if (!in)
    FAIL("no batch-model test data in " << dir.string()
                                         << ": run scripts/test, or .venv/bin/python "
                                            "tests/batch/make_batch_models.py "
                                         << dir.string());
  std::map<std::string, BatchCase> cases;
  std::vector<std::string> order;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name, model, npz;
    BatchRun run;
    int64_t min = 0, max = 0;
    if (!(words >> name >> model >> min >> max >> run.batch >> npz)) continue;
    auto arrays = read_npz(dir / npz);
    REQUIRE(arrays.ok());
    testing::OrtArrays split = testing::split_ort_arrays(*std::move(arrays));
    run.inputs = std::move(split.inputs);
    run.expected = std::move(split.expected);
    if (!cases.count(name)) order.push_back(name);
    BatchCase& c = cases[name];
    c.name = name;
    c.model = dir / model;
    c.min = min;
    c.max = max;
    c.runs.push_back(std::move(run));
  }
  std::vector<BatchCase> out;
  for (const std::string& name : order) out.push_back(std::move(cases[name]));
  REQUIRE(out.size() == 5);
  return out;
}

// The input's shape with its batch (the first axis) as -1.
std::vector<int64_t> symbolic(const Tensor& t) {
  std::vector<int64_t> shape = t.shape();
  shape[0] = -1;
  return shape;
}

// `got` equals ONNX Runtime's `want`: strings and integers exactly, floats to 1e-4.
void check_matches(const Tensor& got, const Tensor& want, const std::string& name) {
  testing::check_matches_ort(got, want, name, 1e-4f);
}

std::vector<Tensor> input_tensors(const BatchRun& run) {
  std::vector<Tensor> inputs;
  for (const auto& [name, t] : run.inputs) inputs.push_back(t);
  return inputs;
}

// `c`'s inputs one batch larger than its range allows: the largest batch's, a row repeated.
std::vector<Tensor> one_too_many(const BatchCase& c) {
  std::vector<Tensor> inputs;
  for (const auto& [name, t] : c.runs.back().inputs) {
    Shape shape = t.shape();
    shape[0] += 1;
    Tensor big(t.dtype(), shape);
    const int64_t n = t.numel();
    for (int64_t i = 0; i < big.numel(); ++i) {
      if (t.dtype() == DType::str) {
        big.data<std::string>()[i] = t.data<std::string>()[i % n];
        continue;
      }
      const size_t e = dtype_size(t.dtype());
      std::memcpy(static_cast<uint8_t*>(big.raw()) + i * e,
                  static_cast<const uint8_t*>(t.raw()) + (i % n) * e, e);
    }
    inputs.push_back(std::move(big));
  }
  return inputs;
}

TEST_CASE("batch ranges with data-dependent shapes and strings: the C API",
          "[batch][dynamic][strings]") {
  collage_compiler_t* raw_compiler = nullptr;
  REQUIRE(testing::take_message(collage_compiler_create(&raw_compiler)) == "");
  std::unique_ptr<collage_compiler_t, void (*)(collage_compiler_t*)> compiler(
      raw_compiler, collage_compiler_release);
  TempDir dir;
  for (const BatchCase& c : batch_cases()) {
    INFO(c.name);
    std::vector<std::vector<int64_t>> shapes;
    std::vector<collage_input_shape_t> given;
    for (const auto& [name, t] : c.runs.front().inputs) shapes.push_back(symbolic(t));
    for (size_t i = 0; i < shapes.size(); ++i)
      given.push_back({c.runs.front().inputs[i].first.c_str(),
                       static_cast<int32_t>(shapes[i].size()), shapes[i].data()});
    collage_compile_options_t o;
    collage_compile_options_init(&o);
    // What each backend claims and the trees' fixed strategy: nothing measured on a busy machine.
    o.strategy = "greedy";
    o.tree_strategy = "auto";
    o.num_input_shapes = static_cast<int32_t>(given.size());
    o.input_shapes = given.data();
    o.batch_min = c.min;
    o.batch_max = c.max;
    const std::string artifact = (dir / (c.name + ".collage")).string();
    char* report = nullptr;
    REQUIRE(testing::take_message(collage_compile_file(compiler.get(), c.model.c_str(), &o,
                                                       artifact.c_str(), &report)) == "");
    const std::string report_text = report ? report : "";
    collage_free(report);
    CHECK(report_text.find("\"batch_max\": 6") != std::string::npos);

    collage_module_t* raw = nullptr;
    REQUIRE(testing::take_message(collage_module_load_file(artifact.c_str(), nullptr, &raw)) == "");
    testing::ModulePtr m(raw);
    collage_tensor_info_t info;
    REQUIRE(testing::take_message(collage_module_input_info(m.get(), 0, &info)) == "");
    CHECK(info.batch_axis == 0);
    CHECK(info.batch_min == c.min);
    CHECK(info.batch_max == c.max);

    for (const BatchRun& run : c.runs) {
      INFO("batch " << run.batch);
      std::string message;
      const std::vector<Tensor> got =
          testing::run_module_outputs(m.get(), input_tensors(run), &message);
      INFO(message);
      REQUIRE(got.size() == run.expected.size());
      for (size_t i = 0; i < got.size(); ++i)
        check_matches(got[i], run.expected[i].second, run.expected[i].first);
    }
    std::string message;
    CHECK(testing::run_module_outputs(m.get(), one_too_many(c), &message).empty());
    CHECK_THAT(message, Catch::Contains("has a batch of 7; the artifact was compiled for "
                                        "batches 1 to 6"));
    // Outputs of a size known only at run time, or strings, cannot go to a caller's buffers.
    int32_t code = 0;
    CHECK(testing::run_module(m.get(), input_tensors(c.runs[1]), &code, &message).empty());
    CHECK(code == COLLAGE_STATUS_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("collage_module_run_outputs"));
  }
}

TEST_CASE("batch ranges with data-dependent shapes and strings: collage compile and run",
          "[batch][dynamic][strings][cli]") {
  TempDir dir;
  for (const BatchCase& c : batch_cases()) {
    INFO(c.name);
    std::vector<std::string> args{"compile", c.model.string(), "-o",
                                  (dir / (c.name + ".collage")).string(), "--placement", "greedy",
                                  "--tree-strategy", "auto"};
    for (const auto& [name, t] : c.runs.front().inputs) {
      std::ostringstream shape;
      shape << name << '=' << c.min << ".." << c.max;
      for (size_t d = 1; d < t.shape().size(); ++d) shape << 'x' << t.shape()[d];
      args.insert(args.end(), {"--input-shape", shape.str()});
    }
    auto compiled = testing::run_collage(dir, args);
    INFO(compiled.out << compiled.err);
    REQUIRE(compiled.exit_code == 0);

    for (const BatchRun& run : c.runs) {
      INFO("batch " << run.batch);
      const std::string in = (dir / "in.npz").string(), out = (dir / "out.npz").string();
      REQUIRE(write_npz(in, run.inputs).ok());
      auto r = testing::run_collage(dir, {"run", (dir / (c.name + ".collage")).string(),
                                          "--inputs", in, "--outputs", out});
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      auto got = read_npz(out);
      REQUIRE(got.ok());
      REQUIRE(got->size() == run.expected.size());
      for (size_t i = 0; i < got->size(); ++i) {
        CHECK((*got)[i].first == run.expected[i].first);
        check_matches((*got)[i].second, run.expected[i].second, run.expected[i].first);
      }
    }
    std::vector<std::pair<std::string, Tensor>> big;
    const std::vector<Tensor> seven = one_too_many(c);
    for (size_t i = 0; i < seven.size(); ++i)
      big.emplace_back(c.runs.back().inputs[i].first, seven[i]);
    REQUIRE(write_npz((dir / "big.npz").string(), big).ok());
    auto r = testing::run_collage(dir, {"run", (dir / (c.name + ".collage")).string(),
                                        "--inputs", (dir / "big.npz").string()});
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.err, Catch::Contains("has a batch of 7; the artifact was compiled for "
                                      "batches 1 to 6"));
  }
}

}  // namespace
}  // namespace collage
