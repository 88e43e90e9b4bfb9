// The graph-level search: finds the end-to-end optimum the additive model misses, never returns
// something slower than its best seed, deterministic for a seed, measures the early seeds first.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "collage/executor.h"
#include "placement/cost_model.h"
#include "placement/evolutionary_search.h"
#include "placement_fakes.h"

using namespace collage;
using namespace collage::testing;

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

// Kernel costs: the MatMuls (nodes 0, 2, 5) are cheapest on gemm, elementwise ops on ew; both
// can do both; the reference does anything slowly.
double kernel_cost(const std::string& b, const std::vector<NodeId>& nodes) {
  double matmuls = 0, others = 0;
  for (NodeId n : nodes) (n == 0 || n == 2 || n == 5 ? matmuls : others) += 1;
  if (b == "reference") return 3.0 * (matmuls + others);
  if (b == "gemm") return 1.0 * matmuls + 0.6 * others;
  return 1.5 * matmuls + 0.5 * others;
}

struct World {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  CandidateSet cands;
  std::vector<double> costs;
  World() {
    (void)r.add(fake_backend("gemm", {{"mm_relu", "(Relu? (MatMul * const))"},
                                      {"mm_sigmoid", "(Sigmoid (MatMul * const))"},
                                      {"add_tanh", "(Tanh? (Add * *))"}}));
    (void)r.add(fake_backend("ew", {{"add_tanh", "(Tanh? (Add * *))"},
                                    {"unary", "(Relu|Tanh|Sigmoid *)"},
                                    {"relu_mm_add", "(Add (MatMul (Relu *) const) *)"}}));
    (void)r.add(make_reference_backend());
    GraphReachability reach(g);
    cands = collect_candidates(g, reach, r.all(), {});
    FunctionCostModel model(kernel_cost);
    std::vector<CandidateCost> cc;
    cost_candidates(ctx, g, cands, 0, model, {}, cc);
    costs = edge_costs(cc);
  }
  std::vector<size_t> genes(
      const std::vector<std::pair<std::vector<NodeId>, std::string>>& groups) {
    std::vector<size_t> out;
    for (const auto& [nodes, backend] : groups) {
      int c = cands.find(NodeSet::of(g.nodes().size(), nodes), r.find(backend));
      REQUIRE(c >= 0);
      out.push_back(static_cast<size_t>(c));
    }
    return out;
  }
  // `groups`, then every node after them in a group of its own on the reference backend.
  std::vector<size_t> then_reference(
      std::vector<std::pair<std::vector<NodeId>, std::string>> groups = {}) {
    NodeId next = 0;
    for (const auto& group : groups)
      for (NodeId n : group.first) next = std::max<NodeId>(next, n + 1);
    for (NodeId n = next; n < static_cast<NodeId>(g.nodes().size()); ++n)
      groups.push_back({{n}, "reference"});
    return genes(groups);
  }
  // The best end-to-end latency over every runnable partition into candidates.
  double brute_force(const FakeEvaluator& e) {
    double best = INFINITY;
    const size_t k = cands.size(), n = g.nodes().size();
    for (uint64_t mask = 1; mask < (uint64_t{1} << k); ++mask) {
      NodeSet all(n);
      size_t count = 0;
      bool ok = true;
      Placement p;
      for (size_t c = 0; c < k && ok; ++c) {
        if (!(mask >> c & 1)) continue;
        ok = !cands[c].nodes.intersects(all);
        all |= cands[c].nodes;
        count += cands[c].nodes.count();
        p.groups.push_back({cands[c].nodes, cands[c].backend->name(), "", -1, {}});
      }
      if (!ok || count != n || !validate_placement(g, r, p).ok()) continue;
      best = std::min(best, e.exact(p));
    }
    return best;
  }
};

}  // namespace

TEST_CASE("the graph-level search finds what the additive cost model misses", "[evolution]") {
  World w;
  // End to end every group costs 1 ms more and every edge between backends 0.5 ms: fewer, larger
  // groups on one backend win, which the op-level sums do not see.
  FakeEvaluator e2e(w.g, kernel_cost, /*per_group=*/1.0, /*per_crossing=*/0.5);
  auto op = op_level_search(w.g, w.cands, w.costs, {});
  REQUIRE(op.ok());
  std::vector<EvolutionSeed> seeds = {{"op-level", op->chosen},
                                      {"all-reference", w.then_reference()}};
  EvolutionOptions options;
  options.population = 8;
  options.max_generations = 25;
  options.time_budget_s = 1000;
  options.seed = 3;
  auto result = evolutionary_search(w.g, w.r, w.cands, w.costs, seeds, e2e, options);
  REQUIRE(result.ok());
  const double optimum = w.brute_force(e2e);
  auto placed = placement_of(w.g, w.r, w.cands, w.costs, result->genes);
  REQUIRE(placed.ok());
  CHECK(e2e.exact(*placed) == Approx(optimum));
  CHECK(result->ms == Approx(optimum));
  CHECK(result->origin == "evolved");
  REQUIRE(result->seeds.size() == 2);
  CHECK(result->seeds[0].strategy == "op-level");
  CHECK(result->ms < result->seeds[0].ms);
  // The small space runs dry before 25 generations: the search stops and says so.
  CHECK(result->generations < 25);
  CHECK_THAT(result->notes[0], Catch::Contains("nothing new to breed after"));
  CHECK_THAT(result->notes.back(),
             Catch::Contains(std::to_string(result->generations) + " generations"));
}

TEST_CASE("with no budget left, the forced seeds are measured and no other", "[evolution]") {
  World w;
  FakeEvaluator e2e(w.g, kernel_cost, 1.0, 0.5);
  auto op = op_level_search(w.g, w.cands, w.costs, {});
  REQUIRE(op.ok());
  std::vector<EvolutionSeed> all_reference = {{"all-reference", w.then_reference()}};
  // Three different placements: a seed the search has measured already costs no budget.
  std::vector<EvolutionSeed> seeds = {
      {"op-level", op->chosen},
      all_reference[0],
      {"gemm then reference", w.then_reference({{{0, 1}, "gemm"}})}};
  for (int forced : {1, 2}) {
    EvolutionOptions options;
    options.time_budget_s = 0;
    options.forced_seeds = forced;
    auto result = evolutionary_search(w.g, w.r, w.cands, w.costs, seeds, e2e, options);
    REQUIRE(result.ok());
    REQUIRE(result->seeds.size() == 3);
    CHECK(result->seeds[0].ms > 0);
    CHECK((result->seeds[1].ms > 0) == (forced == 2));
    CHECK(result->seeds[2].ms < 0);
    CHECK(result->seeds[2].note == "the time budget was spent");
    CHECK(result->generations == 0);
  }
}

TEST_CASE("with no budget left, the early seeds are measured first, and the faster one kept",
          "[evolution]") {
  // GoogLeNet on an AVX2 host: the op-level seed's evaluation (kernels to build) spent the
  // budget, and single:native, 1.4x faster, was never measured nor chosen.
  World w;
  auto op = op_level_search(w.g, w.cands, w.costs, {});
  REQUIRE(op.ok());
  std::vector<EvolutionSeed> seeds = {{"op-level", op->chosen},
                                      {"all-reference", w.then_reference()},
                                      {"built", w.then_reference({{{0, 1}, "gemm"}}),
                                       /*early=*/true}};
  const std::vector<size_t> built = seeds[2].genes;
  // End to end, the seed whose kernels are built runs fastest.
  class Evaluator : public PlacementEvaluator {
   public:
    explicit Evaluator(std::vector<std::string> fast) : fast_(std::move(fast)) {}
    absl::StatusOr<double> latency_ms(const Placement& p) override {
      return describe(p) == fast_ ? 2.0 : 9.0;
    }

   private:
    std::vector<std::string> fast_;
  } e2e(describe(*placement_of(w.g, w.r, w.cands, w.costs, built)));
  EvolutionOptions options;
  options.time_budget_s = 0;
  options.predict_ms = [](const std::vector<size_t>&) { return 1000.0; };  // past the deadline
  auto result = evolutionary_search(w.g, w.r, w.cands, w.costs, seeds, e2e, options);
  REQUIRE(result.ok());
  REQUIRE(result->seeds.size() == 3);
  CHECK(result->seeds[0].ms == Approx(9.0));  // the first seed, whatever the deadline
  CHECK(result->seeds[1].ms < 0);             // neither early nor forced
  CHECK(result->seeds[2].ms == Approx(2.0));  // before: not measured
  CHECK(result->origin == "built");
}

TEST_CASE("an early seed waits when it and the first seed would not end before the deadline",
          "[evolution]") {
  // GoogLeNet on the AVX2 host: three early seeds took 3.8 s (2.3 s predicted), and the op-level
  // evaluation after them, measured whatever the deadline, ended 8 s past it.
  World w;
  auto op = op_level_search(w.g, w.cands, w.costs, {});
  REQUIRE(op.ok());
  const std::vector<size_t> cheap = w.then_reference({{{0, 1}, "gemm"}});
  const std::vector<size_t> dear = w.then_reference();
  REQUIRE(cheap != dear);
  std::vector<EvolutionSeed> seeds = {
      {"op-level", op->chosen}, {"cheap", cheap, /*early=*/true}, {"dear", dear, /*early=*/true}};
  auto measured = [&](double budget_s) {
    FakeEvaluator e2e(w.g, kernel_cost, 1.0, 0.5);
    EvolutionOptions options;
    options.time_budget_s = budget_s;
    options.max_generations = 1;
    // Predicted: the op-level evaluation 600 ms, the early ones 10 and 500 ms.
    options.predict_ms = [&](const std::vector<size_t>& genes) {
      return genes == op->chosen ? 600.0 : genes == cheap ? 10.0 : 500.0;
    };
    auto result = evolutionary_search(w.g, w.r, w.cands, w.costs, seeds, e2e, options);
    REQUIRE(result.ok());
    REQUIRE(result->seeds.size() == 3);
    return std::vector<bool>{result->seeds[0].ms > 0, result->seeds[1].ms > 0,
                             result->seeds[2].ms > 0};
  };
  // 1 s: the dear one (500 ms) and the op-level one (600 ms) would end past the deadline.
  CHECK(measured(1.0) == std::vector<bool>{true, true, false});
  // 5 s: both fit.
  CHECK(measured(5.0) == std::vector<bool>{true, true, true});
}

TEST_CASE("the graph-level search is deterministic for a seed", "[evolution]") {
  World w;
  auto run = [&](uint64_t seed, int* calls) {
    FakeEvaluator e2e(w.g, kernel_cost, 1.0, 0.5);
    auto op = op_level_search(w.g, w.cands, w.costs, {});
    EvolutionOptions options;
    options.population = 6;
    options.max_generations = 4;
    options.time_budget_s = 1000;
    options.seed = seed;
    auto r =
        evolutionary_search(w.g, w.r, w.cands, w.costs, {{"op-level", op->chosen}}, e2e, options);
    *calls = e2e.calls;
    return *r;
  };
  int calls_a = 0, calls_b = 0;
  EvolutionResult a = run(11, &calls_a), b = run(11, &calls_b);
  CHECK(a.genes == b.genes);
  CHECK(a.ms == b.ms);
  CHECK(a.notes == b.notes);
  CHECK(calls_a == calls_b);
}

TEST_CASE("the result is never slower than the best seed", "[evolution]") {
  World w;
  auto op = op_level_search(w.g, w.cands, w.costs, {});
  REQUIRE(op.ok());
  // Evolved placements look 1000x faster once, then slow: only the alternating re-measurement of
  // the finalists catches it.
  class Fickle : public PlacementEvaluator {
   public:
    Fickle(const Graph& g, std::string seed_key)
        : g_(g), e_(g, kernel_cost, 1, 0.5), seed_key_(std::move(seed_key)) {}
    absl::StatusOr<double> latency_ms(const Placement& p) override {
      const std::string key = p.to_json(g_);
      if (key == seed_key_) return e_.exact(p);
      return ++seen_[key] == 1 ? 0.001 : 1000.0;
    }

   private:
    const Graph& g_;
    FakeEvaluator e_;
    std::string seed_key_;
    std::map<std::string, int> seen_;
  };
  auto seed_placement = placement_of(w.g, w.r, w.cands, w.costs, op->chosen);
  REQUIRE(seed_placement.ok());
  Fickle fickle(w.g, seed_placement->to_json(w.g));
  EvolutionOptions options;
  options.population = 6;
  options.max_generations = 3;
  options.time_budget_s = 1000;
  auto result =
      evolutionary_search(w.g, w.r, w.cands, w.costs, {{"op-level", op->chosen}}, fickle, options);
  REQUIRE(result.ok());
  CHECK(result->origin == "op-level");
  CHECK(result->genes == op->chosen);
  bool remeasured = false;
  for (const std::string& n : result->notes) remeasured |= n.starts_with("finalists re-measured");
  CHECK(remeasured);
}

TEST_CASE("remeasure alternately: every placement once (or the first `always`), later rounds "
          "only before the deadline",
          "[evolution]") {
  struct Counting : PlacementEvaluator {
    int calls = 0;
    absl::StatusOr<double> latency_ms(const Placement&) override { return 1.0 + ++calls; }
  };
  const std::vector<Placement> placements(3);
  Counting open;
  size_t evaluations = 0;
  std::vector<double> ms = remeasure_alternately(placements, open, 3, HUGE_VAL, &evaluations);
  CHECK(open.calls == 9);
  CHECK(evaluations == 9);
  REQUIRE(ms.size() == 3);
  // Rounds forward, backward, forward: the first placement's samples are 2, 7, 8.
  CHECK(ms[0] == 7);
  Counting late;
  evaluations = 0;
  ms = remeasure_alternately(placements, late, 3, /*deadline_ms=*/0, &evaluations);
  CHECK(late.calls == 3);
  CHECK(evaluations == 3);
  CHECK(ms == std::vector<double>{2, 3, 4});
  // Past the deadline, only the first `always` are measured.
  Counting bounded;
  evaluations = 0;
  ms = remeasure_alternately(placements, bounded, 3, /*deadline_ms=*/0, &evaluations, 1);
  CHECK(bounded.calls == 1);
  CHECK(evaluations == 1);
  CHECK(ms == std::vector<double>{2, kNotMeasured, kNotMeasured});
}

TEST_CASE(
    "the finalists' re-measurement starts only what ends within its grace; a finalist left "
    "out competes with its first measurement",
    "[evolution]") {
  // BERT-base on the AVX2 host: two finalists of 4.3 s each, started just before the deadline,
  // took the compile 6.5 s past its budget.
  World w;
  auto op = op_level_search(w.g, w.cands, w.costs, {});
  REQUIRE(op.ok());
  const std::vector<EvolutionSeed> seeds = {{"op-level", op->chosen},
                                            {"all-reference", w.then_reference()}};
  // Every evaluation takes 30 ms. The op-level placement measures 1 ms first, then 5 ms; the
  // other 2 ms: 15 runs per evaluation, so their re-measurements are predicted at 15 and 30 ms.
  class Slow : public PlacementEvaluator {
   public:
    explicit Slow(std::vector<std::string> fast) : fast_(std::move(fast)) {}
    absl::StatusOr<double> latency_ms(const Placement& p) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      if (describe(p) != fast_) return 2.0;
      return ++fast_calls == 1 ? 1.0 : 5.0;
    }
    int fast_calls = 0;

   private:
    std::vector<std::string> fast_;
  } e2e(describe(*placement_of(w.g, w.r, w.cands, w.costs, op->chosen)));
  EvolutionOptions options;
  options.time_budget_s = 0;
  options.forced_seeds = 2;
  options.final_grace_s = 0.05;  // the first (15 ms) fits; the second does not, after it
  auto result = evolutionary_search(w.g, w.r, w.cands, w.costs, seeds, e2e, options);
  REQUIRE(result.ok());
  CHECK(e2e.fast_calls == 2);  // measured, then re-measured once
  std::string line;
  for (const std::string& n : result->notes)
    if (n.starts_with("finalists re-measured")) line = n;
  CHECK(line ==
        "finalists re-measured: op-level 5.000 ms (first 1.000); all-reference not "
        "re-measured (first 2.000)");
  CHECK(result->origin == "all-reference");
  CHECK(result->ms == Approx(2.0));
}
