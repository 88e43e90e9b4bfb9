// The tree strategy of a compile (driver/tree_strategy.h, used by `collage compile` and
// collage_compile_file): the candidate measured fastest is compiled, candidates are costed by the
// placement (a fake cost model, then the real measurer whose cost database answers a second
// compile), and the compiled model matches the library.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "collage/executor.h"
#include "collage/passes.h"
#include "driver/tree_strategy.h"
#include "collage/compiler.h"
#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

// Imports the case's model file with input shape [batch, features], the tree candidates placed on
// the command line's backends.
absl::StatusOr<CompileModel> load_compile_model(const TreeCase& c, int64_t batch, int64_t features,
                                                const TreeCompileOptions& options) {
  BackendRegistry backends;
  if (absl::Status s = register_builtin_backends(backends); !s.ok()) return s;
  ModelImportOptions import;
  import.onnx.input_shapes["input"] = {batch, features};
  return import_compile_model(tree_test_context(), backends, c.model, import, options);
}

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes()) ops.push_back(std::string(n.op_name()));
  return ops;
}

// The timing of each candidate by label.
std::map<std::string, double> timings_of(const TreeStrategyReport& r) {
  std::map<std::string, double> ms;
  for (const TreeStrategyTiming& t : r.timings)
    ms[tree_strategy_label(t.candidate)] = t.status.ok() ? t.ms : -1.0;
  return ms;
}

TEST_CASE("compile: the strategy measured fastest is the one compiled", "[trees][compile]") {
  const auto cases = tree_cases();
  const TreeCase& c = find_tree_case(cases, "xgb_dense_reg");
  auto model = import_xgboost_json(c.model);
  REQUIRE(model.ok());
  const int64_t batch = 32;
  const Context& ctx = tree_test_context();
  const std::map<std::string, std::map<std::string, double>> tables = {
      {"ptt", {{"fused:auto", 5}, {"ptt", 2}, {"tt", 3}, {"gemm", 4}}},
      {"gemm", {{"fused:auto", 5}, {"ptt", 2}, {"tt", 3}, {"gemm", 1}}},
      {"fused:auto", {{"fused:auto", 0.5}, {"ptt", 2}, {"tt", 3}, {"gemm", 1}}},
      {"tt", {{"fused:auto", 5}, {"ptt", 2}, {"tt", 1.5}}},  // gemm fails to measure
  };
  for (const auto& [want, ms] : tables) {
    INFO("expected " << want);
    TreeCompileOptions options;
    std::vector<int64_t> batches;
    options.measure = [&ms, &batches](const TreeStrategyCandidate& cand,
                                      const Graph& g) -> absl::StatusOr<double> {
      batches.push_back(g.value(g.inputs()[0]).type.shape[0]);
      auto it = ms.find(tree_strategy_label(cand));
      if (it == ms.end()) return absl::UnavailableError("not measurable here");
      return it->second;
    };
    auto loaded = load_compile_model(c, batch, model->num_features, options);
    REQUIRE(loaded.ok());
    REQUIRE(loaded->trees.size() == 1);
    const TreeStrategyReport& r = loaded->trees[0];
    CHECK(r.node.empty());
    CHECK(r.mode == "measured");
    CHECK(r.batch == batch);
    CHECK(r.chosen == want);
    CHECK(r.note.empty());
    // Every candidate is listed with its time; each was measured at the compiled batch.
    REQUIRE(r.timings.size() == 4);
    for (const auto& [label, t] : timings_of(r))
      CHECK(t == (ms.count(label) ? ms.at(label) : -1.0));
    CHECK(batches == std::vector<int64_t>(4, batch));
    const TreeStrategy strategy =
        want == "fused:auto" ? TreeStrategy::fused : *parse_tree_strategy(want);
    auto expected = build_tree_graph(ctx, *model, strategy, batch);
    REQUIRE(expected.ok());
    CHECK(ops_of(loaded->graph) == ops_of(*expected));
    // The report's JSON lists the same.
    auto all = nlohmann::json::parse(tree_strategy_json(loaded->trees));
    REQUIRE(all.size() == 1);
    const nlohmann::json& j = all[0];
    CHECK(j["node"] == "");
    CHECK(j["chosen"] == want);
    REQUIRE(j["candidates"].size() == 4);
    CHECK(j["candidates"][0]["strategy"] == "fused:auto");
    CHECK(j["candidates"][0]["ms"] == ms.at("fused:auto"));
  }
}

TEST_CASE("compile: fixed strategies, and the fixed rule when nothing could be measured",
          "[trees][compile]") {
  const auto cases = tree_cases();
  const TreeCase& c = find_tree_case(cases, "xgb_dense_bin");
  auto model = import_xgboost_json(c.model);
  REQUIRE(model.ok());
  const Context& ctx = tree_test_context();

  TreeCompileOptions fixed;
  fixed.mode = *parse_tree_strategy_mode("tt");
  int calls = 0;
  fixed.measure = [&calls](const TreeStrategyCandidate&, const Graph&) -> absl::StatusOr<double> {
    ++calls;
    return 1.0;
  };
  auto tt = load_compile_model(c, 4, model->num_features, fixed);
  REQUIRE(tt.ok());
  CHECK(calls == 0);
  CHECK(tt->trees[0].mode == "tt");
  CHECK(tt->trees[0].chosen == "tt");
  CHECK(tt->trees[0].timings.empty());
  CHECK(ops_of(tt->graph) ==
        ops_of(*build_tree_graph(ctx, *model, TreeStrategy::tree_traversal, 4)));

  fixed.mode = *parse_tree_strategy_mode("auto");
  auto rule = load_compile_model(c, 4, model->num_features, fixed);
  REQUIRE(rule.ok());
  CHECK(rule->trees[0].chosen == tree_strategy_name(pick_tree_strategy(*model)));

  TreeCompileOptions failing;
  failing.measure = [](const TreeStrategyCandidate&, const Graph&) -> absl::StatusOr<double> {
    return absl::UnavailableError("no device");
  };
  auto fallback = load_compile_model(c, 4, model->num_features, failing);
  REQUIRE(fallback.ok());
  CHECK(fallback->trees[0].chosen == tree_strategy_name(pick_tree_strategy(*model)));
  CHECK_THAT(fallback->trees[0].note, Catch::Contains("nothing could be measured"));
  CHECK_THAT(fallback->trees[0].note, Catch::Contains("ptt: no device"));

  // Candidates over the tensor-size limit are not measured.
  TreeCompileOptions small = fixed;
  small.mode = TreeStrategyMode{};
  small.max_value_bytes = 1;
  auto limited = load_compile_model(c, 4, model->num_features, small);
  REQUIRE(limited.ok());
  CHECK(calls == 0);
  CHECK_THAT(limited->trees[0].note, Catch::Contains("-byte measuring limit"));

  check_status(parse_tree_strategy_mode("fastest").status(), absl::StatusCode::kInvalidArgument,
               "tree strategy 'fastest'");
  check_status(load_compile_model(c, 4, model->num_features + 1, failing).status(),
               absl::StatusCode::kInvalidArgument, "input shape");
}

// A cost model charging `tree_ensemble_ms` for a group holding the fused operator and 0.01 ms per
// node otherwise.
class FusedPenalty : public CostModel {
 public:
  explicit FusedPenalty(double tree_ensemble_ms) : fused_ms_(tree_ensemble_ms) {}
  absl::StatusOr<Cost> cost(const Candidate&, const ExtractedSubgraph& group) override {
    ++calls;
    double ms = 0;
    for (const Node& n : group.graph.nodes())
      ms += n.op_name() == "TreeEnsemble" ? fused_ms_ : 0.01;
    return Cost{ms, 1, 0, false};
  }
  int calls = 0;

 private:
  double fused_ms_;
};

TEST_CASE("compile: candidates are costed by the placement's cost model", "[trees][compile]") {
  const auto cases = tree_cases();
  const TreeCase& c = find_tree_case(cases, "lgb_dense_multi");
  auto model = import_lightgbm_text(c.model);
  REQUIRE(model.ok());
  for (double fused_ms : {1000.0, 1e-4}) {
    INFO("TreeEnsemble costs " << fused_ms << " ms");
    FusedPenalty costs(fused_ms);
    TreeCompileOptions options;
    options.placement = quick_tree_placement("");
    options.placement.cost_model = &costs;
    auto loaded = load_compile_model(c, 16, model->num_features, options);
    REQUIRE(loaded.ok());
    const TreeStrategyReport& r = loaded->trees.at(0);
    CHECK(costs.calls > 0);
    const auto ms = timings_of(r);
    REQUIRE(ms.size() == 4);
    std::string fastest;
    for (const auto& [label, t] : ms) {
      INFO(label);
      CHECK(t >= 0);
      if (fastest.empty() || t < ms.at(fastest)) fastest = label;
    }
    CHECK(r.chosen == fastest);
    if (fused_ms > 1) {
      CHECK(ms.at("fused:auto") >= 1000);
      CHECK(r.chosen != "fused:auto");
    } else {
      CHECK(r.chosen == "fused:auto");
    }
  }
}

TEST_CASE(
    "compile: a warm re-compile takes every cost from the cost database; the compiled "
    "model matches the library",
    "[trees][compile]") {
  const auto cases = tree_cases();
  const TreeCase& c = find_tree_case(cases, "xgb_nan_multi");
  auto model = import_xgboost_json(c.model);
  REQUIRE(model.ok());
  const NamedTensors arrays = *read_npz(c.arrays);
  const Tensor x_all = npz_array(arrays, "x");
  const Tensor want_all = npz_array(arrays, "predictions");
  const int64_t batch = 64;
  REQUIRE(x_all.shape()[0] >= batch);
  const Context& ctx = tree_test_context();
  const auto dir = fresh_tree_test_dir("compile_strategy");
  TreeCompileOptions options;
  options.placement = quick_tree_placement((dir / "cost-db.jsonl").string());

  auto cold = load_compile_model(c, batch, model->num_features, options);
  REQUIRE(cold.ok());
  const TreeStrategyReport& first = cold->trees.at(0);
  INFO(tree_strategy_json(cold->trees));
  CHECK(first.measured > 0);
  REQUIRE(first.timings.size() == 4);
  CHECK(first.note.empty());
  auto warm = load_compile_model(c, batch, model->num_features, options);
  REQUIRE(warm.ok());
  const TreeStrategyReport& second = warm->trees.at(0);
  CHECK(second.measured == 0);
  CHECK(second.cached > 0);
  CHECK(timings_of(second) == timings_of(first));
  CHECK(second.chosen == first.chosen);

  // The compiled model, placed as compile places it, predicts what XGBoost predicted.
  auto g = run_passes(ctx, warm->graph);
  REQUIRE(g.ok());
  BackendRegistry backends;
  REQUIRE(register_builtin_backends(backends).ok());
  PlacementOptions placement = options.placement;
  placement.strategy = "op-level";
  auto placed = optimize_detailed(ctx, backends, *g, placement);
  REQUIRE(placed.ok());
  CHECK(placed->measured == 0);
  auto compiled = compile_placement(ctx, backends, *g, placed->placement);
  REQUIRE(compiled.ok());
  const Tensor x = first_rows(x_all, batch), want = first_rows(want_all, batch);
  auto y = compiled->run({x});
  REQUIRE(y.ok());
  REQUIRE(y->size() == 1);
  CHECK(max_abs_error((*y)[0], want) <= 1e-5);
}

}  // namespace
}  // namespace collage::testing
