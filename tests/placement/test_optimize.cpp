// optimize(): strategies, backend selection, explanations, determinism, progress, errors, and a
// second compile against the same cost database measuring nothing.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "collage/executor.h"
#include "placement/baselines.h"
#include "placement_fakes.h"

using namespace collage;
using namespace collage::testing;
using Strings = std::vector<std::string>;

namespace {

// n0 m1=MatMul(x,w1)  n1 r1=Relu(m1)  n2 m2=MatMul(r1,w2)  n3 a=Add(m2,x)  n4 t=Tanh(a)
// n5 m3=MatMul(t,w3)  n6 s=Sigmoid(m3)
Graph mlp(const Context& ctx) {
  GraphBuilder b(ctx, "mlp");
  ValueId x = b.add_input("x", {DType::f32, {4, 4}});
  auto w = [&](const char* n) { return b.add_constant(n, Tensor(DType::f32, {4, 4})); };
  ValueId v = *b.add("MatMul", {x, w("w1")}, nullptr, "m1");
  v = *b.add("Relu", {v}, nullptr, "r1");
  v = *b.add("MatMul", {v, w("w2")}, nullptr, "m2");
  v = *b.add("Add", {v, x}, nullptr, "a");
  v = *b.add("Tanh", {v}, nullptr, "t");
  v = *b.add("MatMul", {v, w("w3")}, nullptr, "m3");
  b.add_output(*b.add("Sigmoid", {v}, nullptr, "s"));
  return *b.finish();
}

double kernel_cost(const std::string& b, const std::vector<NodeId>& nodes) {
  double matmuls = 0, others = 0;
  for (NodeId n : nodes) (n == 0 || n == 2 || n == 5 ? matmuls : others) += 1;
  if (b == "reference") return 3.0 * (matmuls + others);
  if (b == "gemm") return matmuls ? 1.0 * matmuls + 0.6 * others : -1;  // no lone elementwise
  return matmuls ? -1 : 0.5 * others;
}

struct World {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  World() {
    (void)r.add(fake_backend("gemm", {{"mm_relu", "(Relu? (MatMul * const))"},
                                      {"mm_sigmoid", "(Sigmoid (MatMul * const))"}}));
    (void)r.add(fake_backend(
        "ew", {{"add_tanh", "(Tanh? (Add * *))"}, {"unary", "(Relu|Tanh|Sigmoid *)"}}));
    (void)r.add(make_reference_backend());
  }
};

}  // namespace

TEST_CASE("optimize op-level: groups, costs, alternatives, notes", "[optimize]") {
  World w;
  FunctionCostModel model(kernel_cost);
  PlacementOptions options;
  options.strategy = "op-level";
  options.cost_model = &model;
  std::vector<std::string> phases;
  size_t last_total = 0;
  options.progress = [&](const PlacementProgress& p) {
    if (phases.empty() || phases.back() != p.phase) phases.push_back(p.phase);
    if (p.phase == "measure") last_total = p.total;
  };
  auto r = optimize_detailed(w.ctx, w.r, w.g, options);
  REQUIRE(r.ok());
  const Placement& p = r->placement;
  CHECK(p.strategy == "op-level");
  CHECK(describe(p) == Strings{"gemm{0}", "ew{1}", "gemm{2}", "ew{3,4}", "gemm{5}", "ew{6}"});
  CHECK(p.estimated_ms == Approx(1 + 0.5 + 1 + 1 + 1 + 0.5));
  CHECK(p.groups[0].cost_ms == 1.0);
  CHECK(p.groups[0].origin == "mm_relu");
  // m1's rivals: the same node on the reference (same nodes, first), gemm's fused m1+r1.
  REQUIRE(p.groups[0].alternatives.size() == 2);
  CHECK(p.groups[0].alternatives[0].backend == "reference");
  CHECK(p.groups[0].alternatives[0].note == "same nodes");
  CHECK(p.groups[0].alternatives[0].cost_ms == 3.0);
  CHECK(p.groups[0].alternatives[1].note == "covers m1, r1");
  CHECK(p.groups[0].alternatives[1].cost_ms == Approx(1.6));
  CHECK(r->candidates == 17);  // gemm 5, ew 5, reference 7
  CHECK(last_total == 17);
  CHECK(phases == Strings{"candidates", "measure", "op-level"});
  bool noted = false;
  for (const std::string& n : p.notes) noted |= n.starts_with("op-level search:");
  CHECK(noted);
  // The failed "builds" (gemm's lone elementwise ops do not exist; ew's MatMuls) are explained.
  auto json = nlohmann::json::parse(p.to_json(w.g));
  CHECK(json["groups"][1]["nodes"] == nlohmann::json::array({"r1"}));
}

TEST_CASE("optimize: backend selection, baselines, errors", "[optimize]") {
  World w;
  FunctionCostModel model(kernel_cost);
  PlacementOptions options;
  options.strategy = "op-level";
  options.cost_model = &model;
  options.backends = {"gemm"};  // the fallback joins by itself
  auto only_gemm = optimize(w.ctx, w.r, w.g, options);
  REQUIRE(only_gemm.ok());
  CHECK(describe(*only_gemm) ==
        Strings{"gemm{0,1}", "gemm{2}", "reference{3}", "reference{4}", "gemm{5,6}"});

  options.backends = {};
  options.strategy = "single:ew";
  auto single = optimize(w.ctx, w.r, w.g, options);
  REQUIRE(single.ok());
  CHECK(single->strategy == "single:ew");
  options.strategy = "greedy";
  CHECK(optimize(w.ctx, w.r, w.g, options)->strategy == "greedy");

  options.strategy = "best";
  auto bad = optimize(w.ctx, w.r, w.g, options);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("unknown placement strategy 'best'"));
  options.strategy = "single:cudnn";
  CHECK_THAT(std::string(optimize(w.ctx, w.r, w.g, options).status().message()),
             Catch::Contains("backend 'cudnn' is not registered"));
  options.strategy = "op-level";
  options.backends = {"tensorrt"};
  CHECK_THAT(
      std::string(optimize(w.ctx, w.r, w.g, options).status().message()),
      Catch::Contains("backend 'tensorrt' is not registered (registered: gemm, ew, reference)"));
  // A backend the library knows of but was built without: the error says why.
  w.r.add_unavailable("tensorrt", "this build has no TensorRT");
  CHECK_THAT(std::string(optimize(w.ctx, w.r, w.g, options).status().message()),
             Catch::Contains("backend 'tensorrt' is not registered: this build has no TensorRT "
                             "(registered: gemm, ew, reference)"));
  options.backends = {};
  options.strategy = "single:tensorrt";
  CHECK_THAT(std::string(optimize(w.ctx, w.r, w.g, options).status().message()),
             Catch::Contains("strategy 'single:tensorrt': backend 'tensorrt' is not registered: "
                             "this build has no TensorRT"));
  options.strategy = "op-level";
  options.fallback = "native";
  CHECK_THAT(std::string(optimize(w.ctx, w.r, w.g, options).status().message()),
             Catch::Contains("fallback backend 'native' is not registered"));
}

TEST_CASE("optimize two-level: deterministic, never slower than a seed, compared", "[optimize]") {
  World w;
  auto run = [&](uint64_t seed) {
    FunctionCostModel model(kernel_cost);
    FakeEvaluator e2e(w.g, kernel_cost, /*per_group=*/1.0, /*per_crossing=*/0.5);
    PlacementOptions options;
    options.cost_model = &model;
    options.evaluator = &e2e;
    options.seed = seed;
    options.population = 6;
    options.max_generations = 6;
    options.time_budget_s = 1000;
    options.compare_baselines = true;
    auto r = optimize_detailed(w.ctx, w.r, w.g, options);
    REQUIRE(r.ok());
    return *r;
  };
  OptimizeResult a = run(5), b = run(5);
  CHECK(a.placement.to_json(w.g) == b.placement.to_json(w.g));
  CHECK(a.evaluations == b.evaluations);
  CHECK(a.placement.strategy == "two-level");
  // Fewer groups and crossings win end to end: kernels 1.6 + 1 + 1 + 1.6, four groups, two
  // crossings.
  CHECK(describe(a.placement) == Strings{"gemm{0,1}", "gemm{2}", "ew{3,4}", "gemm{5,6}"});
  CHECK(a.placement.estimated_ms == Approx(5.2 + 4 + 1.0));
  REQUIRE(a.compared.size() == 3);
  CHECK(a.compared[0].strategy == "two-level");
  CHECK(a.compared[1].strategy == "single:gemm");
  CHECK(a.compared[2].strategy == "single:ew");
  for (const MeasuredPlacement& m : a.compared) CHECK(m.ms >= a.compared[0].ms);
  bool seeds_noted = false;
  for (const std::string& n : a.placement.notes) seeds_noted |= n.starts_with("seed single:gemm:");
  CHECK(seeds_noted);
}

TEST_CASE("optimize two-level: a baseline the comparison measures faster becomes the placement",
          "[optimize]") {
  World w;
  // The search's choice runs 100 ms slower once the comparison starts: what a lucky first
  // measurement looks like when measured again.
  FunctionCostModel model(kernel_cost);
  UnluckyEvaluator e2e(w.g, kernel_cost, /*per_group=*/1.0, /*per_crossing=*/0.5, 100);
  PlacementOptions options;
  options.cost_model = &model;
  options.evaluator = &e2e;
  options.population = 6;
  options.max_generations = 6;
  options.time_budget_s = 1000;
  options.compare_baselines = true;
  options.progress = [&](const PlacementProgress& p) { e2e.comparing |= p.phase == "compare"; };
  auto r = optimize_detailed(w.ctx, w.r, w.g, options);
  REQUIRE(r.ok());
  REQUIRE(r->compared.size() == 4);
  // The fastest baseline, as the comparison measured it.
  const MeasuredPlacement& fastest =
      r->compared[2].ms <= r->compared[3].ms ? r->compared[2] : r->compared[3];
  CHECK(fastest.note == "the chosen placement");
  CHECK(r->chosen_by == fastest.strategy);
  CHECK(r->placement.strategy == "two-level");
  auto single = place_baseline(fastest.strategy, w.g, w.r, {});
  REQUIRE(single.ok());
  CHECK(describe(r->placement) == describe(*single));
  CHECK(r->placement.estimated_ms == Approx(e2e.exact(*single)));
  CHECK(r->compared[0].strategy == "two-level");
  CHECK(r->compared[0].ms == Approx(fastest.ms));
  CHECK(r->compared[1].strategy == "graph-level search");
  CHECK(r->compared[1].ms == Approx(5.2 + 4 + 1.0 + 100));
  // Without the comparison the search's choice stands.
  e2e.comparing = false;
  options.compare_baselines = false;
  options.progress = nullptr;
  auto searched = optimize_detailed(w.ctx, w.r, w.g, options);
  REQUIRE(searched.ok());
  CHECK(describe(searched->placement) == Strings{"gemm{0,1}", "gemm{2}", "ew{3,4}", "gemm{5,6}"});
}

TEST_CASE("optimize two-level: the single-backend seeds' candidates are costed first",
          "[optimize]") {
  World w;
  // What the single-backend placements run, as "backend{nodes}".
  std::set<std::string> seeded;
  for (const char* single : {"single:gemm", "single:ew"}) {
    FunctionCostModel model(kernel_cost);
    PlacementOptions options;
    options.strategy = single;
    options.cost_model = &model;
    auto p = optimize(w.ctx, w.r, w.g, options);
    REQUIRE(p.ok());
    for (const std::string& group : describe(*p)) seeded.insert(group);
  }
  std::vector<std::string> order;
  FunctionCostModel model([&](const std::string& b, const std::vector<NodeId>& nodes) {
    std::string group = b + "{";
    for (size_t i = 0; i < nodes.size(); ++i) group += (i ? "," : "") + std::to_string(nodes[i]);
    order.push_back(group + "}");
    return kernel_cost(b, nodes);
  });
  FakeEvaluator e2e(w.g, kernel_cost, /*per_group=*/1.0, /*per_crossing=*/0.5);
  PlacementOptions options;
  options.cost_model = &model;
  options.evaluator = &e2e;
  options.time_budget_s = 1000;
  REQUIRE(optimize_detailed(w.ctx, w.r, w.g, options).ok());
  // The budget's cut-off falls on the last candidates costed: those of the seeds come first, so
  // that each seed's estimate (which orders the seeds for measurement) is known.
  REQUIRE(order.size() > seeded.size());
  const std::set<std::string> first(order.begin(), order.begin() + seeded.size());
  CHECK(first == seeded);
}

TEST_CASE("optimize with the measurer: a second compile measures nothing", "[optimize]") {
  World w;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("collage-optimize-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  PlacementOptions options;
  options.strategy = "op-level";
  options.cost_db_path = (dir / "cost-db.jsonl").string();
  options.device = "test-device";
  options.num_threads = 2;
  options.trusted_spread = 1e9;  // however busy the machine, trust what was measured
  auto first = optimize_detailed(w.ctx, w.r, w.g, options);
  REQUIRE(first.ok());
  CHECK(first->measured > 0);
  // Every kernel measured was built in step "measure", and said so by backend.
  size_t built = 0;
  for (const KernelBuilds& k : first->builds) {
    CHECK(k.step == "measure");
    CHECK(k.s >= 0);
    built += k.builds;
  }
  CHECK(built == first->measured);
  auto second = optimize_detailed(w.ctx, w.r, w.g, options);
  REQUIRE(second.ok());
  CHECK(second->measured == 0);
  CHECK(second->builds.empty());
  CHECK(second->cached == second->candidates);
  CHECK(describe(second->placement) == describe(first->placement));
  // The placement runs.
  auto model = compile_placement(w.ctx, w.r, w.g, second->placement);
  REQUIRE(model.ok());
  CHECK(model->run({Tensor(DType::f32, {4, 4})}).ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("optimize with the measurer: a spent budget still covers what the fallback cannot run",
          "[optimize]") {
  World w;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("collage-beyond-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  PlacementOptions options;
  options.strategy = "op-level";
  options.fallback = "ew";  // runs no MatMul: those nodes need gemm's (or reference's) kernels
  options.cost_db_path = (dir / "cost-db.jsonl").string();
  options.device = "test-device";
  options.time_budget_s = 1e-6;  // spent before the first kernel
  auto r = optimize_detailed(w.ctx, w.r, w.g, options);
  REQUIRE(r.ok());
  CHECK(r->placement.groups.size() >= 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("optimize: a state limit hit falls back to greedy and says so", "[optimize]") {
  World w;
  FunctionCostModel model(kernel_cost);
  PlacementOptions options;
  options.strategy = "op-level";
  options.cost_model = &model;
  options.max_states = 2;
  auto p = optimize(w.ctx, w.r, w.g, options);
  REQUIRE(p.ok());
  auto greedy = optimize(w.ctx, w.r, w.g, [&] {
    PlacementOptions o = options;
    o.strategy = "greedy";
    return o;
  }());
  REQUIRE(greedy.ok());
  CHECK(describe(*p) == describe(*greedy));
  CHECK_THAT(p->notes.back(), Catch::Contains("more than 2 states") &&
                                  Catch::Contains("the greedy placement stands in"));
}
