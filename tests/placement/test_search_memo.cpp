// The graph-level search's result in the cost database: group encoding, the key, and a second
// two-level compile reusing the first one's placement without evaluating anything.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "collage/executor.h"
#include "placement/search_memo.h"
#include "placement_fakes.h"

using namespace collage;
using namespace collage::testing;

namespace {

// n0 m=MatMul(x,w)  n1 r=Relu(m)  n2 t=Tanh(r)
Graph chain(const Context& ctx) {
  GraphBuilder b(ctx, "chain");
  ValueId x = b.add_input("x", {DType::f32, {4, 4}});
  ValueId v = *b.add("MatMul", {x, b.add_constant("w", Tensor(DType::f32, {4, 4}))}, nullptr, "m");
  v = *b.add("Relu", {v}, nullptr, "r");
  b.add_output(*b.add("Tanh", {v}, nullptr, "t"));
  return *b.finish();
}

double cost(const std::string& backend, const std::vector<NodeId>& nodes) {
  if (backend == "reference") return 3.0 * static_cast<double>(nodes.size());
  return static_cast<double>(nodes.size());
}

}  // namespace

TEST_CASE("search memo: groups round-trip as text; bad text is an error", "[placement][memo]") {
  Context ctx;
  Graph g = chain(ctx);
  Placement p;
  p.groups.push_back({NodeSet::of(3, {0, 1}), "gemm", "", -1, {}});
  p.groups.push_back({NodeSet::of(3, {2}), "ew", "", -1, {}});
  const std::string text = encode_groups(p);
  CHECK(text == "gemm:0,1;ew:2");
  auto back = decode_groups(text, 3);
  REQUIRE(back.ok());
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].first == NodeSet::of(3, {0, 1}));
  CHECK((*back)[0].second == "gemm");
  CHECK((*back)[1].second == "ew");
  for (const char* bad : {"gemm:0,7", "0,1", "gemm:x", ":1", "gemm:-1"}) {
    INFO(bad);
    auto r = decode_groups(bad, 3);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("search memo: the key follows the graph, the options and the backends",
          "[placement][memo]") {
  Context ctx;
  Graph g = chain(ctx);
  auto gemm = fake_backend("gemm", {{"mm", "(MatMul * const)"}});
  std::vector<const Backend*> backends = {gemm.get()};
  PlacementOptions o;
  const CostKey k = search_memo_key("dev", g, o, backends);
  CHECK(k == search_memo_key("dev", g, o, backends));
  CHECK_FALSE(k == search_memo_key("other-dev", g, o, backends));
  PlacementOptions seed = o;
  seed.seed = 1;
  CHECK_FALSE(k == search_memo_key("dev", g, seed, backends));
  PlacementOptions budget = o;
  budget.time_budget_s = 5;
  CHECK_FALSE(k == search_memo_key("dev", g, budget, backends));
  auto ew = fake_backend("ew", {{"unary", "(Relu|Tanh *)"}});
  backends.push_back(ew.get());
  CHECK_FALSE(k == search_memo_key("dev", g, o, backends));
}

TEST_CASE("search memo: a second two-level compile reuses the placement", "[placement][memo]") {
  Context ctx;
  Graph g = chain(ctx);
  BackendRegistry r;
  (void)r.add(fake_backend("gemm", {{"mm_relu", "(Relu? (MatMul * const))"}}));
  (void)r.add(fake_backend("ew", {{"unary", "(Relu|Tanh *)"}}));
  (void)r.add(make_reference_backend());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("collage-memo-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  FakeEvaluator e2e(g, cost, /*per_group=*/1.0, /*per_crossing=*/0.5);
  PlacementOptions options;
  options.cost_db_path = (dir / "cost-db.jsonl").string();
  options.device = "test-device";
  options.num_threads = 1;
  options.trusted_spread = 1e9;
  options.evaluator = &e2e;
  options.population = 4;
  options.max_generations = 3;
  options.time_budget_s = 1000;
  auto first = optimize_detailed(ctx, r, g, options);
  REQUIRE(first.ok());
  CHECK(first->evaluations > 0);
  auto second = optimize_detailed(ctx, r, g, options);
  REQUIRE(second.ok());
  CHECK(second->evaluations == 0);
  CHECK(second->measured == 0);
  CHECK(describe(second->placement) == describe(first->placement));
  CHECK(second->placement.estimated_ms == Approx(first->placement.estimated_ms));
  bool reused = false;
  for (const std::string& n : second->placement.notes) reused |= n.find("reused") != n.npos;
  CHECK(reused);
  // Another seed is another search.
  options.seed = 9;
  auto third = optimize_detailed(ctx, r, g, options);
  REQUIRE(third.ok());
  CHECK(third->evaluations > 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("search memo: a compile that reuses the placement measures no kernel, even a shaky "
          "one, and reuses the comparison",
          "[placement][memo]") {
  Context ctx;
  Graph g = chain(ctx);
  BackendRegistry r;
  (void)r.add(fake_backend("gemm", {{"mm_relu", "(Relu? (MatMul * const))"}}));
  (void)r.add(fake_backend("ew", {{"unary", "(Relu|Tanh *)"}}));
  (void)r.add(make_reference_backend());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("collage-memo-cmp-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  FakeEvaluator e2e(g, cost, /*per_group=*/1.0, /*per_crossing=*/0.5);
  PlacementOptions options;
  options.cost_db_path = (dir / "cost-db.jsonl").string();
  options.device = "test-device";
  options.num_threads = 1;
  options.trusted_spread = 0;  // every record shaky: a plain second compile measures again
  options.evaluator = &e2e;
  options.population = 4;
  options.max_generations = 2;
  options.time_budget_s = 1000;
  options.compare_baselines = true;
  auto first = optimize_detailed(ctx, r, g, options);
  REQUIRE(first.ok());
  CHECK(first->measured > 0);
  REQUIRE(first->compared.size() >= 2);
  auto second = optimize_detailed(ctx, r, g, options);
  REQUIRE(second.ok());
  CHECK(second->measured == 0);
  CHECK(second->evaluations == 0);
  CHECK(describe(second->placement) == describe(first->placement));
  REQUIRE(second->compared.size() == first->compared.size());
  for (size_t i = 0; i < first->compared.size(); ++i) {
    CHECK(second->compared[i].strategy == first->compared[i].strategy);
    CHECK(second->compared[i].ms == first->compared[i].ms);
  }
  bool reused = false;
  for (const std::string& n : second->placement.notes)
    reused |= n.find("comparison: measured by the compile that chose") != n.npos;
  CHECK(reused);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "search memo: a compile that reuses the comparison adopts the baseline it measured "
    "faster again",
    "[placement][memo]") {
  Context ctx;
  Graph g = chain(ctx);
  BackendRegistry r;
  (void)r.add(fake_backend("gemm", {{"mm_relu", "(Relu? (MatMul * const))"}}));
  (void)r.add(fake_backend("ew", {{"unary", "(Relu|Tanh *)"}}));
  (void)r.add(make_reference_backend());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("collage-memo-adopt-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  UnluckyEvaluator e2e(g, cost, /*per_group=*/1.0, /*per_crossing=*/0.5, /*penalty_ms=*/100);
  PlacementOptions options;
  options.cost_db_path = (dir / "cost-db.jsonl").string();
  options.device = "test-device";
  options.num_threads = 1;
  options.evaluator = &e2e;
  options.population = 4;
  options.max_generations = 2;
  options.time_budget_s = 1000;
  options.compare_baselines = true;
  options.progress = [&](const PlacementProgress& p) { e2e.comparing |= p.phase == "compare"; };
  auto first = optimize_detailed(ctx, r, g, options);
  REQUIRE(first->chosen_by.starts_with("single:"));
  e2e.comparing = false;
  auto second = optimize_detailed(ctx, r, g, options);
  REQUIRE(second.ok());
  CHECK(second->evaluations == 0);
  CHECK(second->chosen_by == first->chosen_by);
  CHECK(describe(second->placement) == describe(first->placement));
  REQUIRE(second->compared.size() == first->compared.size());
  for (size_t i = 0; i < first->compared.size(); ++i) {
    CHECK(second->compared[i].strategy == first->compared[i].strategy);
    CHECK(second->compared[i].ms == first->compared[i].ms);
    CHECK(second->compared[i].note == first->compared[i].note);
  }
  std::filesystem::remove_all(dir);
}
