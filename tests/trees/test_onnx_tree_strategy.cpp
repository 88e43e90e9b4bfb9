// The tree strategy of ONNX models holding ai.onnx.ml tree ensembles: each TreeEnsemble node's
// strategy is chosen on its own, at the batch of its input, by measurement (import_compile_model,
// `collage compile`) or as fixed, and the compiled model still computes what ONNX Runtime does.
// The model: x -> Mul(x, 1) "scaler" -> an XGBoost regressor "xgb_trees", and x -> a LightGBM
// 10-class classifier "lgb_trees", both exported by onnxmltools.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "collage/reference.h"
#include "core/str_cat.h"
#include "driver/tree_strategy.h"
#include "collage/compiler.h"
#include "tools/cli_test_util.h"
#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

constexpr int64_t kFeatures = 12;  // the "dense" dataset

onnx::ModelProto read_model(const std::filesystem::path& p) {
  onnx::ModelProto m;
  std::ifstream in(p, std::ios::binary);
  REQUIRE(m.ParseFromIstream(&in));
  REQUIRE(m.graph().node_size() == 1);
  return m;
}

// Writes the two-ensemble model described at the top to `path`.
void write_two_tree_model(const std::filesystem::path& path) {
  const auto cases = tree_cases();
  const onnx::ModelProto reg = read_model(find_tree_case(cases, "onnx_xgb_dense_reg").model);
  const onnx::ModelProto multi = read_model(find_tree_case(cases, "onnx_lgb_dense_multi").model);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::OperatorSetIdProto* ml = m.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(1);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("two_tree_ensembles");
  *g.add_input() = reg.graph().input(0);
  onnx::TensorProto& ones = *g.add_initializer();
  ones.set_name("ones");
  ones.set_data_type(onnx::TensorProto::FLOAT);
  ones.add_dims(kFeatures);
  for (int64_t i = 0; i < kFeatures; ++i) ones.add_float_data(1.0f);
  onnx::NodeProto& scaler = *g.add_node();
  scaler.set_op_type("Mul");
  scaler.set_name("scaler");
  // std::string arguments: GCC 12 warns (-Wrestrict, a false positive) on protobuf's
  // add_input(const char*) inlined here.
  for (const std::string input : {"x", "ones"}) scaler.add_input(input);
  scaler.add_output(std::string("scaled"));
  onnx::NodeProto& a = *g.add_node() = reg.graph().node(0);
  a.set_name("xgb_trees");
  a.set_input(0, "scaled");
  onnx::NodeProto& b = *g.add_node() = multi.graph().node(0);
  b.set_name("lgb_trees");
  for (const onnx::ValueInfoProto& out : reg.graph().output()) *g.add_output() = out;
  for (const onnx::ValueInfoProto& out : multi.graph().output()) *g.add_output() = out;
  std::ofstream file(path, std::ios::binary);
  REQUIRE(m.SerializeToOstream(&file));
}

// The first `rows` rows of the regressor case's inputs, and its outputs from ONNX Runtime.
std::pair<Tensor, Tensor> regressor_rows(int64_t rows) {
  const NamedTensors arrays = *read_npz(find_tree_case(tree_cases(), "onnx_xgb_dense_reg").arrays);
  return {first_rows(npz_array(arrays, "x"), rows),
          first_rows(npz_array(arrays, "variable"), rows)};
}

ModelImportOptions batch_of(int64_t batch) {
  ModelImportOptions import;
  import.onnx.input_shapes["x"] = {batch, kFeatures};
  return import;
}

absl::StatusOr<CompileModel> compile_model(const std::filesystem::path& model, int64_t batch,
                                           const TreeCompileOptions& options) {
  BackendRegistry backends;
  if (absl::Status s = register_builtin_backends(backends); !s.ok()) return s;
  return import_compile_model(tree_test_context(), backends, model, batch_of(batch), options);
}

int count_ops(const Graph& g, std::string_view op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_name() == op;
  return n;
}

TEST_CASE("ONNX tree nodes: each node gets the strategy measured fastest at its batch",
          "[trees][onnx-ml][compile]") {
  const auto dir = fresh_tree_test_dir("onnx_strategy_fake");
  write_two_tree_model(dir / "two.onnx");
  // Candidates come in order fused:auto, ptt, tt, gemm, node by node in graph order.
  const std::map<std::string, std::map<std::string, double>> tables = {
      {"xgb_trees", {{"fused:auto", 1}, {"ptt", 2}, {"tt", 3}, {"gemm", 4}}},
      {"lgb_trees", {{"fused:auto", 5}, {"ptt", 2}, {"tt", 3}, {"gemm", 4}}},
  };
  std::vector<int64_t> batches;
  int calls = 0;
  TreeCompileOptions options;
  options.measure = [&](const TreeStrategyCandidate& c, const Graph& g) -> absl::StatusOr<double> {
    batches.push_back(g.value(g.inputs()[0]).type.shape[0]);
    const char* node = calls++ < 4 ? "xgb_trees" : "lgb_trees";
    return tables.at(node).at(tree_strategy_label(c));
  };
  const int64_t batch = 16;
  auto compiled = compile_model(dir / "two.onnx", batch, options);
  REQUIRE(compiled.ok());
  CHECK(batches == std::vector<int64_t>(8, batch));
  REQUIRE(compiled->trees.size() == 2);
  for (const TreeStrategyReport& r : compiled->trees) {
    INFO(r.node);
    REQUIRE(tables.count(r.node));
    CHECK(r.mode == "measured");
    CHECK(r.batch == batch);
    CHECK(r.note.empty());
    REQUIRE(r.timings.size() == 4);
    for (const TreeStrategyTiming& t : r.timings)
      CHECK(t.ms == tables.at(r.node).at(tree_strategy_label(t.candidate)));
  }
  CHECK(compiled->trees[0].node == "xgb_trees");
  CHECK(compiled->trees[0].chosen == "fused:auto");
  CHECK(compiled->trees[1].chosen == "ptt");
  CHECK(count_ops(compiled->graph, "TreeEnsemble") == 1);
  auto j = nlohmann::json::parse(tree_strategy_json(compiled->trees));
  REQUIRE(j.size() == 2);
  CHECK(j[1]["node"] == "lgb_trees");
  CHECK(j[1]["chosen"] == "ptt");

  // The regressor still computes what ONNX Runtime computed; the classifier what it computes
  // imported on its own with the same strategy.
  auto [x, y] = regressor_rows(batch);
  auto outs = run_reference(compiled->graph, {x});
  REQUIRE(outs.ok());
  REQUIRE(outs->size() == 3);
  CHECK(max_abs_error((*outs)[0], y) <= 1e-5);
  ModelImportOptions ptt = batch_of(batch);
  ptt.trees.strategy = TreeStrategy::perfect_tree_traversal;
  auto alone = import_model_file(tree_test_context(),
                                 find_tree_case(tree_cases(), "onnx_lgb_dense_multi").model, ptt);
  REQUIRE(alone.ok());
  CHECK(count_ops(*alone, "TreeEnsemble") == 0);
  auto want = run_reference(*alone, {x});
  REQUIRE(want.ok());
  CHECK((*outs)[1].identical((*want)[0]));
  CHECK(max_abs_error((*outs)[2], (*want)[1]) <= 1e-6);
}

TEST_CASE("ONNX tree nodes: measured for real, a warm compile reuses every cost",
          "[trees][onnx-ml][compile]") {
  const auto dir = fresh_tree_test_dir("onnx_strategy_measured");
  write_two_tree_model(dir / "two.onnx");
  TreeCompileOptions options;
  options.placement = quick_tree_placement((dir / "cost-db.jsonl").string());
  const int64_t batch = 64;
  auto cold = compile_model(dir / "two.onnx", batch, options);
  REQUIRE(cold.ok());
  INFO(tree_strategy_json(cold->trees));
  REQUIRE(cold->trees.size() == 2);
  for (const TreeStrategyReport& r : cold->trees) {
    CHECK(r.mode == "measured");
    CHECK(r.note.empty());
    CHECK(r.measured > 0);
    REQUIRE(r.timings.size() == 4);
    const TreeStrategyTiming* fastest = nullptr;
    for (const TreeStrategyTiming& t : r.timings) {
      INFO(r.node << " " << tree_strategy_label(t.candidate) << ": " << t.status);
      REQUIRE(t.status.ok());
      CHECK(t.ms > 0);
      if (!fastest || t.ms < fastest->ms) fastest = &t;
    }
    CHECK(r.chosen == tree_strategy_label(fastest->candidate));
  }
  auto warm = compile_model(dir / "two.onnx", batch, options);
  REQUIRE(warm.ok());
  REQUIRE(warm->trees.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(warm->trees[i].measured == 0);
    CHECK(warm->trees[i].cached > 0);
    CHECK(warm->trees[i].chosen == cold->trees[i].chosen);
  }
  auto [x, y] = regressor_rows(batch);
  auto outs = run_reference(warm->graph, {x});
  REQUIRE(outs.ok());
  CHECK(max_abs_error((*outs)[0], y) <= 1e-5);
}

TEST_CASE("ONNX tree nodes: fixed strategies, and a chooser's error names the node",
          "[trees][onnx-ml][compile]") {
  const auto dir = fresh_tree_test_dir("onnx_strategy_fixed");
  write_two_tree_model(dir / "two.onnx");
  TreeCompileOptions fixed;
  fixed.mode = *parse_tree_strategy_mode("tt");
  fixed.measure = [](const TreeStrategyCandidate&, const Graph&) -> absl::StatusOr<double> {
    FAIL("a fixed strategy measures nothing");
    return 0.0;
  };
  auto tt = compile_model(dir / "two.onnx", 8, fixed);
  REQUIRE(tt.ok());
  REQUIRE(tt->trees.size() == 2);
  for (const TreeStrategyReport& r : tt->trees) {
    CHECK(r.mode == "tt");
    CHECK(r.chosen == "tt");
    CHECK(r.timings.empty());
  }
  CHECK(count_ops(tt->graph, "TreeEnsemble") == 0);
  ModelImportOptions fused = batch_of(8);
  fused.trees.strategy = TreeStrategy::fused;
  auto g = import_model_file(tree_test_context(), dir / "two.onnx", fused);
  REQUIRE(g.ok());
  CHECK(count_ops(*g, "TreeEnsemble") == 2);

  OnnxImportOptions failing;
  failing.input_shapes["x"] = {8, kFeatures};
  failing.tree_strategy = [](std::string_view node, const TreeEnsemble&, int64_t) {
    return absl::StatusOr<TreeStrategy>(absl::InvalidArgumentError(str_cat("not ", node)));
  };
  check_status(import_onnx_file(tree_test_context(), dir / "two.onnx", failing).status(),
               absl::StatusCode::kInvalidArgument,
               "TreeEnsembleRegressor 'xgb_trees': choosing its tree strategy: not xgb_trees");
}

TEST_CASE("cli: compile measures each ONNX tree node's strategy and the artifact runs",
          "[trees][onnx-ml][cli]") {
  TempDir dir;
  write_two_tree_model(dir / "two.onnx");
  auto [x, y] = regressor_rows(16);
  REQUIRE(write_npz(dir / "in.npz", {{"x", x}}).ok());
  auto compiled =
      run_collage(dir, {"compile", (dir / "two.onnx").string(), "--input-shape", "x=16x12",
                        "--backends", "trees,eigen", "--no-compare", "--report",
                        (dir / "report.json").string(), "-o", (dir / "two.collage").string()});
  INFO(compiled.out << compiled.err);
  REQUIRE(compiled.exit_code == 0);
  CHECK_THAT(compiled.out, Catch::Contains("tree strategy of node 'xgb_trees' at batch 16 "
                                           "(measured)"));
  CHECK_THAT(compiled.out, Catch::Contains("tree strategy of node 'lgb_trees' at batch 16 "
                                           "(measured)"));
  CHECK_THAT(compiled.err, Catch::Contains("placing and costing lgb_trees: ptt"));
  std::ifstream report_file(dir / "report.json");
  const nlohmann::json report = nlohmann::json::parse(report_file);
  REQUIRE(report["tree_strategies"].size() == 2);
  CHECK(report["tree_strategies"][0]["node"] == "xgb_trees");
  CHECK(report["tree_strategies"][0]["candidates"].size() == 4);

  auto ran = run_collage(dir, {"run", (dir / "two.collage").string(), "--inputs",
                               (dir / "in.npz").string(), "--outputs", (dir / "out.npz").string()});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  auto out = read_npz(dir / "out.npz");
  REQUIRE(out.ok());
  CHECK(max_abs_error(npz_array(*out, "variable"), y) <= 1e-5);
}

}  // namespace
}  // namespace collage::testing
