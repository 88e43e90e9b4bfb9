// A tree model compiled through the compiler C API (collage_compile_file) and run through the
// runtime C API: the strategy is the measured choice, listed in the report, and the artifact
// predicts what the library and XGBoost predict.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "collage/collage.h"
#include "common/runtime_c_util.h"
#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

struct CompilerDeleter {
  void operator()(collage_compiler_t* c) const { collage_compiler_release(c); }
};
using CompilerPtr = std::unique_ptr<collage_compiler_t, CompilerDeleter>;

CompilerPtr new_compiler() {
  collage_compiler_t* raw = nullptr;
  REQUIRE(take_message(collage_compiler_create(&raw)).empty());
  return CompilerPtr(raw);
}

// Loads the artifact at `path` and runs it on `inputs`: its outputs, by graph output name;
// REQUIREs loading and running to succeed.
NamedTensors run_artifact(const std::string& path, const std::vector<Tensor>& inputs) {
  collage_module_t* raw = nullptr;
  REQUIRE(take_message(collage_module_load_file(path.c_str(), nullptr, &raw)).empty());
  ModulePtr module(raw);
  std::string message;
  std::vector<Tensor> outputs = run_module(module.get(), inputs, nullptr, &message);
  INFO(message);
  REQUIRE(outputs.size() == static_cast<size_t>(collage_module_num_outputs(module.get())));
  NamedTensors named;
  for (size_t i = 0; i < outputs.size(); ++i) {
    collage_tensor_info_t info{};
    info.struct_size = sizeof info;
    REQUIRE(take_message(
                collage_module_output_info(module.get(), static_cast<int32_t>(i), &info)) == "");
    named.emplace_back(info.name, std::move(outputs[i]));
  }
  return named;
}

struct Compiled {
  std::string status;  // "" on success
  nlohmann::json report;
};

enum class Source { file, memory };

// collage_compile_file of `model` into `artifact` (Source::file), or collage_compile_memory of
// the file's bytes (Source::memory; the artifact is dropped), for input `input` [batch, features]
// with the trees and eigen backends (those a unit test can afford to measure), `tree_strategy`
// (NULL: the default).
Compiled compile(collage_compiler_t* compiler, const TreeCase& c, const std::string& artifact,
                 const std::string& cost_db, const int64_t shape[2], const char* tree_strategy,
                 const char* input_name = "input", Source source = Source::file) {
  collage_input_shape_t input{input_name, 2, shape};
  collage_compile_options_t o;
  collage_compile_options_init(&o);
  o.strategy = "op-level";
  o.backends = "trees,eigen";
  o.cost_db_path = cost_db.c_str();
  o.num_input_shapes = 1;
  o.input_shapes = &input;
  o.num_threads = 1;
  o.tree_strategy = tree_strategy;
  char* report = nullptr;
  Compiled out;
  if (source == Source::memory) {
    std::ifstream in(c.model, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    void* data = nullptr;
    size_t size = 0;
    out.status = take_message(
        collage_compile_memory(compiler, bytes.data(), bytes.size(), &o, &data, &size, &report));
    collage_free(data);
  } else {
    out.status = take_message(
        collage_compile_file(compiler, c.model.c_str(), &o, artifact.c_str(), &report));
  }
  if (report) out.report = nlohmann::json::parse(report);
  collage_free(report);
  return out;
}

// Every candidate of a report's tree strategy is listed with its cost, or skipped because the
// artifact could not hold it (on trees and eigen the graph strategies keep an operator only the
// reference backend runs, e.g. the Gather of PTT and TT); the chosen one is the cheapest.
void check_candidates(const nlohmann::json& t) {
  REQUIRE(t["candidates"].size() == 4);
  const char* labels[] = {"fused:auto", "ptt", "tt", "gemm"};
  std::string cheapest;
  double cheapest_ms = 0;
  for (size_t i = 0; i < 4; ++i) {
    const nlohmann::json& cand = t["candidates"][i];
    CHECK(cand["strategy"] == labels[i]);
    const double ms = cand["ms"].get<double>();
    if (ms < 0) {
      CHECK_THAT(cand["skipped"].get<std::string>(), Catch::Contains("reference backend"));
      continue;
    }
    CHECK(cand["skipped"] == "");
    if (cheapest.empty() || ms < cheapest_ms) {
      cheapest = labels[i];
      cheapest_ms = ms;
    }
  }
  CHECK(t["candidates"][0]["ms"].get<double>() >= 0);  // the trees backend runs fused
  CHECK(t["chosen"] == cheapest);
}

// A report of `node` (empty for a tree-model file) measured at `batch` with a cold cost database.
void check_cold_report(const nlohmann::json& t, const std::string& node, int64_t batch) {
  CHECK(t["node"] == node);
  CHECK(t["mode"] == "measured");
  CHECK(t["batch"] == batch);
  CHECK(t["note"] == "");
  CHECK(t["kernels_measured"].get<int64_t>() > 0);
  check_candidates(t);
}

TEST_CASE("C API: collage_compile_file measures the tree strategy", "[trees][capi]") {
  const auto cases = tree_cases();
  const TreeCase c = find_tree_case(cases, "xgb_nan_multi");
  auto model = import_xgboost_json(c.model);
  REQUIRE(model.ok());
  const NamedTensors arrays = *read_npz(c.arrays);
  const Tensor x_all = npz_array(arrays, "x");
  const Tensor want_all = npz_array(arrays, "predictions");
  const int64_t batch = 32, features = x_all.shape()[1];
  REQUIRE(x_all.shape()[0] >= batch);
  const int64_t shape[2] = {batch, features};
  const auto dir = fresh_tree_test_dir("capi");
  const std::string artifact = (dir / "model.collage").string();
  const std::string cost_db = (dir / "cost-db.jsonl").string();

  CompilerPtr compiler = new_compiler();

  Compiled measured = compile(compiler.get(), c, artifact, cost_db, shape, nullptr);
  REQUIRE(measured.status.empty());
  REQUIRE(measured.report.contains("groups"));
  const nlohmann::json& t = measured.report["tree_strategies"][0];
  INFO(t.dump(2));
  check_cold_report(t, "", batch);

  // The artifact predicts what the library's graph of the chosen strategy and XGBoost predict.
  const Tensor x = first_rows(x_all, batch), want = first_rows(want_all, batch);
  const NamedTensors y_out = run_artifact(artifact, {x});
  REQUIRE(y_out.size() == 1);
  const Tensor& y = y_out[0].second;
  const std::string chosen = t["chosen"];
  const auto strategy = parse_tree_strategy(chosen.substr(0, chosen.find(':')));
  REQUIRE(strategy.ok());
  CHECK(max_abs_error(y, run_tree_graph(*model, *strategy, x)) <= 1e-5);
  CHECK(max_abs_error(y, want) <= 1e-5);

  // A fixed strategy measures nothing; an unknown one is refused, naming it.
  Compiled fixed = compile(compiler.get(), c, artifact, cost_db, shape, "fused");
  REQUIRE(fixed.status == "");
  CHECK(fixed.report["tree_strategies"][0]["mode"] == "fused");
  CHECK(fixed.report["tree_strategies"][0]["chosen"] == "fused");
  CHECK(fixed.report["tree_strategies"][0]["candidates"].empty());
  Compiled bad = compile(compiler.get(), c, artifact, cost_db, shape, "fastest");
  CHECK_THAT(bad.status, Catch::Contains("tree strategy 'fastest'"));
}

TEST_CASE("C API: an ONNX-ML node's tree strategy is measured, from a file or from memory",
          "[trees][capi][onnx-ml]") {
  const auto cases = tree_cases();
  const TreeCase& c = find_tree_case(cases, "onnx_xgb_nan_multi");
  const NamedTensors arrays = *read_npz(c.arrays);
  const Tensor x_all = npz_array(arrays, "x"), label_all = npz_array(arrays, "label"),
               prob_all = npz_array(arrays, "probabilities");
  const int64_t batch = 32, features = x_all.shape()[1];
  const int64_t shape[2] = {batch, features};
  const auto dir = fresh_tree_test_dir("capi_onnx");
  const std::string artifact = (dir / "model.collage").string();
  const std::string cost_db = (dir / "cost-db.jsonl").string();
  CompilerPtr compiler = new_compiler();

  Compiled from_file = compile(compiler.get(), c, artifact, cost_db, shape, nullptr, "x");
  REQUIRE(from_file.status.empty());
  REQUIRE(from_file.report["tree_strategies"].size() == 1);
  const nlohmann::json& t = from_file.report["tree_strategies"][0];
  INFO(t.dump(2));
  check_cold_report(t, c.name, batch);

  // The artifact computes what ONNX Runtime computed: the labels and the probabilities.
  const NamedTensors outs = run_artifact(artifact, {first_rows(x_all, batch)});
  REQUIRE(outs.size() == 2);
  const Tensor &label = outs[0].second, &prob = outs[1].second;
  const Tensor want_label = first_rows(label_all, batch), want_prob = first_rows(prob_all, batch);
  CHECK(label.identical(want_label));
  CHECK(max_abs_error(prob, want_prob) <= 1e-5);

  // The same bytes compiled from memory: costs come from the cost database (but for records
  // measured with a wide spread on a busy machine, which are measured again), so the choice
  // is the same when nothing was measured again.
  Compiled from_memory =
      compile(compiler.get(), c, artifact, cost_db, shape, nullptr, "x", Source::memory);
  REQUIRE(from_memory.status.empty());
  REQUIRE(from_memory.report["tree_strategies"].size() == 1);
  const nlohmann::json& m = from_memory.report["tree_strategies"][0];
  CHECK(m["node"] == c.name);
  CHECK(m["costs_reused"].get<int64_t>() > 0);
  check_candidates(m);
  if (m["kernels_measured"] == 0) CHECK(m["chosen"] == t["chosen"]);
}

TEST_CASE("C API: tree ensembles after a scaler and beside a network compile and run as ORT does",
          "[trees][capi][onnx-ml]") {
  CompilerPtr compiler = new_compiler();
  int graphs = 0;
  for (const TreeCase& c : tree_cases()) {
    if (c.format != "onnx-graph") continue;
    INFO("case " << c.name);
    ++graphs;
    const NamedTensors arrays = *read_npz(c.arrays);
    const Tensor x = npz_array(arrays, "x");
    const auto dir = fresh_tree_test_dir("capi_graph_" + c.name);
    const std::string artifact = (dir / "model.collage").string();
    Compiled compiled = compile(compiler.get(), c, artifact, (dir / "cost-db.jsonl").string(),
                                x.shape().data(), nullptr, "x");
    REQUIRE(compiled.status.empty());
    // One measured choice for the graph's tree ensemble.
    REQUIRE(compiled.report["tree_strategies"].size() == 1);
    const nlohmann::json& t = compiled.report["tree_strategies"][0];
    INFO(t.dump(2));
    CHECK(t["mode"] == "measured");
    CHECK(t["batch"] == x.shape()[0]);
    check_candidates(t);

    const NamedTensors outs = run_artifact(artifact, {x});
    REQUIRE(outs.size() == arrays.size() - 1);
    for (const auto& [name, out] : outs) {
      INFO("output " << name);
      const Tensor want = npz_array(arrays, name);
      if (want.dtype() == DType::i64)
        CHECK(out.identical(want));
      else
        CHECK(max_abs_error(out, want) <= 1e-5);
    }
  }
  CHECK(graphs == 3);
}

}  // namespace
}  // namespace collage::testing
