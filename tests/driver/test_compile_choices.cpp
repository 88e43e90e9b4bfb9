// A warm compile measures nothing: compiled twice with one cost database, the second compile
// times no kernel, makes no measured choice (Winograd or direct, the wave schedule) and no
// end-to-end evaluation, and writes the same placement and the very same artifact.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "collage/compiler.h"
#include "collage/ops/nn.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"

namespace collage {
namespace {

std::shared_ptr<ConvAttrs> conv3x3() {
  auto a = std::make_shared<ConvAttrs>();
  a->pads = {1, 1, 1, 1};
  a->strides = {1, 1};
  a->dilations = {1, 1};
  return a;
}

// x f32[1x16x12x12] -> two 3x3 convolutions side by side (each with a Winograd form) -> Add.
Graph two_convs(const Context& ctx) {
  GraphBuilder b(ctx, "two_convs");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 12, 12}});
  auto conv = [&](uint64_t seed) {
    ValueId w = b.add_constant("w" + std::to_string(seed),
                               testing::random_f32({16, 16, 3, 3}, seed, -0.3f, 0.3f));
    return testing::add(b, "Relu", {testing::add(b, "Conv", {x, w}, conv3x3())});
  };
  ValueId left = conv(1), right = conv(2);
  ValueId y = testing::add(b, "Add", {left, right});
  b.set_value_name(y, "y");
  b.add_output(y);
  return testing::finish(b);
}

std::vector<std::pair<std::vector<NodeId>, std::string>> groups_of(const Placement& p) {
  std::vector<std::pair<std::vector<NodeId>, std::string>> out;
  for (const PlacedGroup& g : p.groups) out.emplace_back(g.nodes.to_vector(), g.backend);
  return out;
}

}  // namespace

TEST_CASE("compiler: a warm compile measures nothing and writes the same artifact", "[driver]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("collage-warm-compile-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  const Graph g = two_convs(compiler->context());
  CompileOptions o;
  o.placement.strategy = "two-level";
  o.placement.backends = {"native"};
  o.placement.num_threads = 2;
  o.placement.executor = PlacementExecutor::automatic;
  // Enough that a loaded machine (load 14 on 2 cores) still leaves the build budget to measure
  // the wave schedule: with 10 s the cold compile spent it and measured one choice only.
  o.placement.time_budget_s = 60;
  o.placement.max_generations = 1;
  o.placement.cost_db_path = (dir / "cost-db.jsonl").string();
  o.placement.code_cache = code_cache_dir(o.placement.cost_db_path);

  auto cold = compiler->compile(ModelSource::graph(g), o);
  INFO(cold.status());
  REQUIRE(cold.ok());
  CHECK(cold->optimized.measured > 0);
  // The Winograd choice of the (identical) convolution group and the artifact's wave schedule.
  CHECK(cold->choices_measured >= 2);

  // A fresh compiler: nothing chosen in memory, only what the cost database holds.
  auto warm_compiler = Compiler::create();
  REQUIRE(warm_compiler.ok());
  auto warm = warm_compiler->compile(ModelSource::graph(g), o);
  INFO(warm.status());
  REQUIRE(warm.ok());
  CHECK(warm->optimized.measured == 0);
  CHECK(warm->optimized.evaluations == 0);
  CHECK(warm->choices_measured == 0);
  CHECK(warm->choices_reused >= 2);
  CHECK(warm->optimized.chosen_by == "remembered");
  CHECK(groups_of(warm->optimized.placement) == groups_of(cold->optimized.placement));
  CHECK(warm->artifact == cold->artifact);

  const auto report = nlohmann::json::parse(warm->report_json());
  CHECK(report["measured"] == 0);
  CHECK(report["choices_measured"] == 0);
  CHECK(report["choices_reused"] == warm->choices_reused);
  CHECK(report["phases_s"].contains("build"));
  std::filesystem::remove_all(dir);
}

}  // namespace collage
