// The compile driver (collage/compiler.h): a graph built in C++, ONNX bytes and a file compiled
// into artifacts the runtime runs as the reference executor does; the report; errors.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "collage/compiler.h"
#include "collage/executor.h"
#include "collage/reference.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"

namespace collage {
namespace {

// x f32[3x5] -> MatMul(w 5x4) -> Add(b) -> Relu -> "y".
Graph small_graph(const Context& ctx) {
  GraphBuilder b(ctx, "small");
  ValueId x = b.add_input("x", {DType::f32, {3, 5}});
  auto y = b.add("MatMul", {x, b.add_constant("w", testing::random_f32({5, 4}, 1))});
  if (y.ok()) y = b.add("Add", {*y, b.add_constant("b", testing::random_f32({4}, 2))});
  if (y.ok()) y = b.add("Relu", {*y});
  REQUIRE(y.ok());
  b.set_value_name(*y, "y");
  b.add_output(*y);
  auto g = b.finish();
  REQUIRE(g.ok());
  return *std::move(g);
}

// Quick options: op-level search, no cost database, one thread.
CompileOptions quick_options() {
  CompileOptions o;
  o.placement.strategy = "op-level";
  o.placement.num_threads = 1;
  o.placement.executor = PlacementExecutor::sequential;
  return o;
}

// Runs artifact `bytes` through the runtime on `input` and returns its one output.
Tensor run_artifact(const std::string& bytes, const Tensor& input) {
  collage_module_t* m = nullptr;
  REQUIRE(testing::take_message(collage_module_load_memory(bytes.data(), bytes.size(), nullptr,
                                                           &m)) == "");
  int32_t code = 0;
  std::string message;
  std::vector<Tensor> out = testing::run_module(m, {input}, &code, &message);
  collage_module_release(m);
  INFO(message);
  REQUIRE(out.size() == 1);
  return out[0];
}

TEST_CASE("compiler: a graph built in C++ compiles to an artifact the runtime runs", "[driver]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  const Graph g = small_graph(compiler->context());
  auto r = compiler->compile(ModelSource::graph(g), quick_options());
  INFO(r.status());
  REQUIRE(r.ok());
  CHECK(r->model == "graph 'small'");
  CHECK(!r->artifact.empty());
  CHECK(r->summary.file_bytes == r->artifact.size());
  CHECK(r->summary.kernels >= 1);
  for (const PlacedGroup& group : r->optimized.placement.groups)
    CHECK(group.backend != kReferenceBackend);  // artifacts keep the reference out

  const Tensor x = testing::random_f32({3, 5}, 7);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  CHECK(testing::max_relative_error(run_artifact(r->artifact, x), (*expected)[0]) < 1e-5);

  const auto report = nlohmann::json::parse(r->report_json());
  CHECK(report["model"] == "graph 'small'");
  CHECK(report["groups"].size() == r->optimized.placement.groups.size());
  CHECK(report["candidates"] == r->optimized.candidates);
  CHECK_FALSE(report.contains("tree_strategies"));
}

TEST_CASE("compiler: place only, and compile_to_file writes what compile returns", "[driver]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  const Graph g = small_graph(compiler->context());
  CompileOptions o = quick_options();
  o.artifact = false;
  auto placed = compiler->compile(ModelSource::graph(g), o);
  REQUIRE(placed.ok());
  CHECK(placed->artifact.empty());
  CHECK(placed->summary.kernels == 0);
  CHECK_FALSE(placed->optimized.placement.groups.empty());

  const auto path = std::filesystem::temp_directory_path() / "collage_driver_test.collage";
  auto written = compiler->compile_to_file(ModelSource::graph(g), o, path);  // artifact forced on
  REQUIRE(written.ok());
  REQUIRE(std::filesystem::exists(path));
  // The artifact goes to the file only, streamed from its pieces; the file runs the model.
  CHECK(written->artifact.empty());
  CHECK(std::filesystem::file_size(path) == written->summary.file_bytes);
  CHECK(std::any_of(written->phases.begin(), written->phases.end(),
                    [](const auto& p) { return p.first == "write"; }));
  std::ifstream in(path, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Tensor x = testing::random_f32({3, 5}, 7);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  CHECK(testing::max_relative_error(run_artifact(file, x), (*expected)[0]) < 1e-5);
  std::filesystem::remove(path);
}

TEST_CASE("compiler: errors name what is at fault", "[driver]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  const Graph g = small_graph(compiler->context());
  CompileOptions o = quick_options();
  o.placement.strategy = "fastest";
  auto bad_strategy = compiler->compile(ModelSource::graph(g), o);
  CHECK(bad_strategy.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad_strategy.status().message()),
             Catch::Contains("unknown placement strategy 'fastest'"));
  o.placement.strategy = "op-level";
  o.batch = {1, 4, {{"x", 0}}, {}};
  auto graph_range = compiler->compile(ModelSource::graph(g), o);
  CHECK(graph_range.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(graph_range.status().message()),
             Catch::Contains("a batch range needs a model file or ONNX bytes"));

  auto missing = compiler->compile(ModelSource::file("/nonexistent/model.onnx"), quick_options());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("/nonexistent/model.onnx"));

  const uint8_t junk[] = {1, 2, 3, 4};
  auto bad_bytes = compiler->compile(ModelSource::onnx_bytes(junk), quick_options());
  CHECK_FALSE(bad_bytes.ok());
  CHECK(ModelSource::onnx_bytes(junk).description() == "ONNX model in memory (4 bytes)");

  // Without the built-in backends nothing takes the nodes.
  CompilerOptions none;
  none.builtin_backends = false;
  auto empty = Compiler::create(std::move(none));
  REQUIRE(empty.ok());
  CHECK(empty->backends().all().empty());
  auto nothing =
      empty->compile(ModelSource::graph(small_graph(empty->context())), quick_options());
  CHECK_THAT(std::string(nothing.status().message()),
             Catch::Contains("fallback backend 'native' is not registered"));

  CHECK(compiler->load_plugin("/nonexistent/libplugin.so").code() ==
        absl::StatusCode::kInvalidArgument);
}

// y = Relu(x @ w), x f32[4x8]: the example plugin (examples/c_plugin) takes the MatMul+Relu.
Graph matmul_relu(const Context& ctx) {
  GraphBuilder b(ctx, "mm_relu");
  ValueId x = b.add_input("x", {DType::f32, {4, 8}});
  auto y = b.add("MatMul", {x, b.add_constant("w", testing::random_f32({8, 5}, 3))});
  if (y.ok()) y = b.add("Relu", {*y});
  REQUIRE(y.ok());
  b.add_output(*y);
  auto g = b.finish();
  REQUIRE(g.ok());
  return *std::move(g);
}

TEST_CASE("compiler: a plugin's kernels ship in artifacts and run with its runtime module",
          "[driver][plugin]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  REQUIRE(compiler->load_plugin(COLLAGE_GEMM_PLUGIN).ok());
  const Graph g = matmul_relu(compiler->context());
  CompileOptions o = quick_options();
  o.placement.strategy = "single:cgemm";
  auto r = compiler->compile(ModelSource::graph(g), o);
  INFO(r.status());
  REQUIRE(r.ok());
  REQUIRE(r->optimized.placement.groups.size() == 1);
  CHECK(r->optimized.placement.groups[0].backend == "cgemm");
  CHECK(r->summary.modules == std::vector<std::string>{"cgemm"});

  const Tensor x = testing::random_f32({4, 8}, 9);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.module_dir = COLLAGE_PLUGIN_MODULE_DIR;
  collage_module_t* m = nullptr;
  REQUIRE(testing::take_message(collage_module_load_memory(r->artifact.data(), r->artifact.size(),
                                                           &options, &m)) == "");
  std::vector<Tensor> out = testing::run_module(m, {x});
  collage_module_release(m);
  REQUIRE(out.size() == 1);
  CHECK(testing::max_relative_error(out[0], (*expected)[0]) < 1e-5);

  // Without the plugin's runtime module the load names it.
  collage_status_t* missing =
      collage_module_load_memory(r->artifact.data(), r->artifact.size(), nullptr, &m);
  CHECK(collage_status_code(missing) == COLLAGE_STATUS_NOT_FOUND);
  CHECK_THAT(testing::take_message(missing),
             Catch::Contains("runtime module 'cgemm' needed by the artifact was not found") &&
                 Catch::Contains("libcollage_rt_cgemm.so"));
}

TEST_CASE("compiler: a plugin without kernel_record runs in process but not in artifacts",
          "[driver][plugin]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  REQUIRE(compiler->load_plugin(std::string(COLLAGE_TEST_PLUGIN_DIR) + "/test_plugin_checked.so")
              .ok());
  GraphBuilder b(compiler->context(), "relu");
  ValueId x = b.add_input("x", {DType::f32, {8}});
  auto y = b.add("Relu", {x});
  REQUIRE(y.ok());
  b.add_output(*y);
  auto g = b.finish();
  REQUIRE(g.ok());
  CompileOptions o = quick_options();
  o.placement.strategy = "single:testrelu";
  o.artifact = false;
  auto placed = compiler->compile(ModelSource::graph(*g), o);
  REQUIRE(placed.ok());
  CHECK(placed->optimized.placement.groups[0].backend == "testrelu");
  o.artifact = true;
  auto refused = compiler->compile(ModelSource::graph(*g), o);
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("backend 'testrelu' gives its kernels no runtime form"));
}

TEST_CASE("compiler: the built-in backends in priority order", "[driver]") {
  BackendRegistry registry;
  REQUIRE(register_builtin_backends(registry).ok());
  std::vector<std::string> names;
  for (const Backend* b : registry.all()) names.push_back(b->name());
  // openvino where this build has it; otherwise the registry says why it is not there.
  std::vector<std::string> expected{"dnnl",    "eigen",   "trees",
                                    "native",  "dynamic", "strings", "reference"};
  if (registry.find("openvino"))
    expected.insert(expected.end() - 1, "openvino");
  else
    CHECK_FALSE(registry.unavailable_reason("openvino").empty());
  CHECK(names == expected);
  CHECK(register_builtin_backends(registry).code() == absl::StatusCode::kAlreadyExists);
  CHECK(parse_tree_strategy_mode("gemm")->fixed == TreeStrategy::gemm);
  CHECK(parse_tree_strategy_mode("measured")->measured);
  CHECK_FALSE(parse_tree_strategy_mode("fastest").ok());
}

}  // namespace
}  // namespace collage
