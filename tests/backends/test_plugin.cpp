// Backend plugins through the C ABI: the C example plugin placed and run against the reference
// executor, check callbacks, and the loader's errors for broken plugins.
#include <catch2/catch.hpp>

#include "collage/backend_loader.h"
#include "collage/executor.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "placement/baselines.h"

using namespace collage;

namespace {

std::string test_plugin(const char* variant) {
  return std::string(COLLAGE_TEST_PLUGIN_DIR) + "/test_plugin_" + variant + ".so";
}

// y = Relu(x @ w) @ v + Relu(z); the MatMul+Relu, the second MatMul and Relu(z) go to the plugin.
Graph mlp(const Context& ctx) {
  GraphBuilder b(ctx, "mlp");
  ValueId x = b.add_input("x", {DType::f32, {5, 7}});
  ValueId z = b.add_input("z", {DType::f32, {5, 3}});
  ValueId w = b.add_constant("w", testing::random_f32({7, 6}, 11));
  ValueId v = b.add_constant("v", testing::random_f32({6, 3}, 12));
  ValueId h = *b.add("Relu", {*b.add("MatMul", {x, w}, nullptr, "mm1")}, nullptr, "relu1");
  ValueId o = *b.add("MatMul", {h, v}, nullptr, "mm2");
  ValueId r = *b.add("Relu", {z}, nullptr, "relu2");
  b.add_output(*b.add("Add", {o, r}, nullptr, "add"));
  return *b.finish();
}

std::string load_error(const std::string& path) {
  auto b = load_backend_plugin(path);
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(b.status().message());
}

// Builds a one-node Relu graph of the given shape with `plugin`.
absl::Status build_relu(const Backend& plugin, Shape shape) {
  Context ctx;
  GraphBuilder b(ctx, "relu");
  ValueId x = b.add_input("x", {DType::f32, std::move(shape)});
  b.add_output(*b.add("Relu", {x}, nullptr, "relu"));
  return plugin.build(*b.finish(), {}).status();
}

}  // namespace

TEST_CASE("a C plugin loaded by path runs its groups like the reference executor", "[plugin]") {
  Context ctx;
  auto plugin = load_backend_plugin(COLLAGE_GEMM_PLUGIN);
  REQUIRE(plugin.ok());
  CHECK((*plugin)->name() == "cgemm");
  CHECK((*plugin)->version() == "2");
  CHECK((*plugin)->device() == DeviceKind::cpu);
  BackendRegistry backends;
  REQUIRE(backends.add(std::move(*plugin)).ok());
  REQUIRE(backends.add(make_reference_backend()).ok());

  Graph g = mlp(ctx);
  auto placement = place_greedy(g, backends);
  REQUIRE(placement.ok());
  std::vector<std::pair<std::string, std::string>> groups;
  for (const PlacedGroup& grp : placement->groups) {
    std::string names;
    for (NodeId n : grp.nodes.to_vector()) {
      if (!names.empty()) names += '+';
      names += g.node(n).name;
    }
    groups.emplace_back(grp.backend, names);
  }
  CHECK(groups ==
        std::vector<std::pair<std::string, std::string>>{
            {"cgemm", "mm1+relu1"}, {"cgemm", "mm2"}, {"cgemm", "relu2"}, {"reference", "add"}});
  auto model = compile_placement(ctx, backends, g, *placement);
  REQUIRE(model.ok());
  CHECK(model->groups()[0].task_count == 4);
  CHECK(model->groups()[0].kernel_module == "cgemm");
  std::vector<Tensor> inputs{testing::random_f32({5, 7}, 1), testing::random_f32({5, 3}, 2)};
  auto got = model->run(inputs);
  auto want = run_reference(g, inputs);
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  INFO(testing::describe_mismatch((*got)[0], (*want)[0]));
  CHECK(testing::max_relative_error((*got)[0], (*want)[0]) < 1e-5);
}

TEST_CASE("a plugin's check callback filters its matches", "[plugin]") {
  Context ctx;
  auto plugin = load_backend_plugin(test_plugin("checked"));
  REQUIRE(plugin.ok());
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {6}});
  ValueId y = b.add_input("y", {DType::f32, {2, 3}});
  b.add_output(*b.add("Relu", {x}));
  b.add_output(*b.add("Relu", {y}));
  Graph g = *b.finish();
  auto cs = (*plugin)->candidates(g, GraphReachability(g));
  REQUIRE(cs.size() == 1);
  CHECK(cs[0].nodes.to_vector() == std::vector<NodeId>{0});
  CHECK(cs[0].origin == "relu");
  BackendRegistry backends;
  REQUIRE(backends.add(std::move(*plugin)).ok());
  REQUIRE(backends.add(make_reference_backend()).ok());
  auto placement = place_single(g, backends, "testrelu");
  REQUIRE(placement.ok());
  auto model = compile_placement(ctx, backends, g, *placement);
  REQUIRE(model.ok());
  std::vector<Tensor> in{testing::random_f32({6}, 1), testing::random_f32({2, 3}, 2)};
  auto got = model->run(in);
  REQUIRE(got.ok());
  auto want = run_reference(g, in);
  CHECK((*got)[0].identical((*want)[0]));
  CHECK((*got)[1].identical((*want)[1]));
}

TEST_CASE("broken plugins give errors naming the plugin, never a crash", "[plugin]") {
  CHECK_THAT(load_error("/nonexistent/libnothing.so"),
             Catch::Contains("backend plugin '/nonexistent/libnothing.so': cannot load"));
  CHECK_THAT(load_error(test_plugin("no_entry")),
             Catch::Contains("no symbol collage_backend_v1_get (not a collage backend plugin)"));
  CHECK_THAT(load_error(test_plugin("bad_version")),
             Catch::Contains("ABI version 99, this collage supports 1"));
  CHECK_THAT(load_error(test_plugin("small_table")), Catch::Contains("table struct_size 16"));
  CHECK_THAT(load_error(test_plugin("no_build")), Catch::Contains("backend plugin 'testrelu' (") &&
                                                      Catch::Contains("missing callback build"));
  CHECK_THAT(load_error(test_plugin("bad_pattern")),
             Catch::Contains("pattern 'relu': pattern '(Relu *': expected ')'"));
}

TEST_CASE("plugin build and run failures become errors naming the plugin", "[plugin]") {
  auto build_error = [](const char* variant) {
    auto plugin = load_backend_plugin(test_plugin(variant));
    REQUIRE(plugin.ok());
    absl::Status s = build_relu(**plugin, {4, 3});
    REQUIRE_FALSE(s.ok());
    return std::string(s.message());
  };
  CHECK_THAT(build_error("build_fails"), Catch::Contains("backend plugin 'testrelu'") &&
                                             Catch::Contains("build failed: no kernel for you"));
  CHECK_THAT(build_error("wrong_shape"),
             Catch::Contains("kernel output 0 would be f32[5x3], but the group's output") &&
                 Catch::Contains("is f32[4x3]"));

  Context ctx;
  auto plugin = load_backend_plugin(test_plugin("run_fails"));
  REQUIRE(plugin.ok());
  BackendRegistry backends;
  REQUIRE(backends.add(std::move(*plugin)).ok());
  REQUIRE(backends.add(make_reference_backend()).ok());
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {8}});
  b.add_output(*b.add("Relu", {x}, nullptr, "relu"));
  Graph g = *b.finish();
  auto placement = place_single(g, backends, "testrelu");
  REQUIRE(placement.ok());
  auto model = compile_placement(ctx, backends, g, *placement);
  REQUIRE(model.ok());
  auto r = model->run({testing::random_f32({8}, 1)});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("group 0 (testrelu: relu): backend plugin 'testrelu'") &&
                 Catch::Contains("kernel_run(task ") && Catch::Contains("device lost in task"));
}
