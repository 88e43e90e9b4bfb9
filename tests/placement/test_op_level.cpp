// The op-level search: exact against brute-force enumeration on random graphs, expected
// placements on hand-built graphs, the cycle-free second pass, caps and errors; boundaries
// charged by backend.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <random>

#include "collage/executor.h"
#include "placement/candidates.h"
#include "placement/cost_model.h"
#include "placement/op_level_search.h"
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

const std::vector<std::pair<std::string, std::string>> kGemm = {
    {"mm_relu", "(Relu? (MatMul * const))"}};
const std::vector<std::pair<std::string, std::string>> kElementwise = {
    {"add_tanh", "(Tanh? (Add * *))"}, {"relu", "(Relu *)"}, {"sigmoid", "(Sigmoid *)"}};

struct Setup {
  CandidateSet cands;
  std::vector<CandidateCost> costs;
};

Setup cost_all(const Context& ctx, const Graph& g, const BackendRegistry& r, CostModel& model,
               int max_depth = 8) {
  Setup s;
  GraphReachability reach(g);
  s.cands = collect_candidates(g, reach, r.all(), {max_depth, 0});
  cost_candidates(ctx, g, s.cands, 0, model, {}, s.costs);
  return s;
}

std::vector<std::string> describe_chosen(const CandidateSet& cands, const std::vector<size_t>& v) {
  Placement p;
  for (size_t c : v) p.groups.push_back({cands[c].nodes, cands[c].backend->name(), "", -1, {}});
  return describe(p);
}

// The cheapest runnable partition by enumerating every subset of candidates; `extra` adds what a
// cover pays beyond its candidates' costs.
double brute_force(const Graph& g, const BackendRegistry& r, const CandidateSet& cands,
                   const std::vector<double>& costs,
                   const std::function<double(const std::vector<size_t>&)>& extra = nullptr) {
  const size_t k = cands.size(), n = g.nodes().size();
  double best = INFINITY;
  for (uint64_t mask = 1; mask < (uint64_t{1} << k); ++mask) {
    size_t count = 0;
    double total = 0;
    bool ok = true;
    NodeSet all(n);
    for (size_t c = 0; c < k && ok; ++c) {
      if (!(mask >> c & 1)) continue;
      if (costs[c] < 0 || cands[c].nodes.intersects(all)) ok = false;
      all |= cands[c].nodes;
      count += cands[c].nodes.count();
      total += costs[c];
    }
    if (!ok || count != n || total >= best) continue;
    Placement p;
    std::vector<size_t> genes;
    for (size_t c = 0; c < k; ++c)
      if (mask >> c & 1) {
        p.groups.push_back({cands[c].nodes, cands[c].backend->name(), "", -1, {}});
        genes.push_back(c);
      }
    if (extra) total += extra(genes);
    if (total < best && validate_placement(g, r, p).ok()) best = total;
  }
  return best;
}

}  // namespace

TEST_CASE("op-level search mixes backends where that is cheapest", "[op-level]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("gemm", kGemm)).ok());
  REQUIRE(r.add(fake_backend("ew", kElementwise)).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  // gemm's fused Relu is slow; ew's elementwise ops are cheap; the reference is slow at all.
  OpTableCostModel model(
      g,
      {{"gemm", {{"MatMul", 1.0}, {"Relu", 3.0}}},
       {"ew", {{"Relu", 0.5}, {"Add", 0.5}, {"Tanh", 0.5}, {"Sigmoid", 0.5}}},
       {"reference",
        {{"MatMul", 5.0}, {"Relu", 5.0}, {"Add", 5.0}, {"Tanh", 5.0}, {"Sigmoid", 5.0}}}},
      /*fused=*/0.5);
  Setup s = cost_all(ctx, g, r, model);
  auto found = op_level_search(g, s.cands, edge_costs(s.costs), {});
  REQUIRE(found.ok());
  CHECK(describe_chosen(s.cands, found->chosen) ==
        Strings{"gemm{0}", "ew{1}", "gemm{2}", "ew{3,4}", "gemm{5}", "ew{6}"});
  CHECK(found->cost == Approx(1 + 0.5 + 1 + 0.75 + 1 + 0.5));
  CHECK_FALSE(found->ready_order);
  CHECK(found->cost == Approx(brute_force(g, r, s.cands, edge_costs(s.costs))));
}

TEST_CASE("boundary charges favour fused candidates", "[op-level]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("gemm", kGemm)).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  // gemm{0,1} costs 2.2, gemm{0} + reference{1} costs 2: cheaper until the boundary m1 -> r1 is
  // charged.
  auto fn = [](const std::string& b, const std::vector<NodeId>& nodes) {
    if (b == "gemm") return nodes.size() == 2 ? 2.2 : 1.0;
    return 1.0;
  };
  for (double boundary : {0.0, 0.5}) {
    FunctionCostModel model(fn, boundary);
    GraphReachability reach(g);
    CandidateSet cands = collect_candidates(g, reach, r.all(), {});
    std::vector<CandidateCost> costs;
    cost_candidates(ctx, g, cands, 0, model, {/*charge_boundaries=*/true}, costs);
    auto found = op_level_search(g, cands, edge_costs(costs), {});
    REQUIRE(found.ok());
    const std::string first = describe_chosen(cands, found->chosen)[0];
    CHECK(first == (boundary > 0 ? "gemm{0,1}" : "gemm{0}"));
    // The graph input x read by m1 and a, and constants, are never charged.
    const int m1 = cands.find(NodeSet::of(7, {0}), r.find("gemm"));
    REQUIRE(m1 >= 0);
    CHECK(costs[static_cast<size_t>(m1)].boundary_ms == 0);
  }
}

TEST_CASE("op-level search is exact: brute force on random graphs", "[op-level]") {
  Context ctx;
  std::mt19937_64 rng(7);
  int cyclic_cases = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 5);  // 4..8 nodes
    Graph g = random_graph(ctx, n, rng());
    auto random_sets = [&](int count) {
      std::vector<std::vector<NodeId>> sets;
      for (int i = 0; i < count; ++i) {
        std::vector<NodeId> s;
        const int size = 2 + static_cast<int>(rng() % 2);
        for (int j = 0; j < size; ++j) s.push_back(static_cast<NodeId>(rng() % n));
        sets.push_back(s);
      }
      return sets;
    };
    BackendRegistry r;
    REQUIRE(r.add(fake_backend("A", {}, random_sets(5))).ok());
    REQUIRE(r.add(fake_backend("B", {}, random_sets(5))).ok());
    REQUIRE(r.add(make_reference_backend()).ok());
    std::map<std::string, double> table;
    FunctionCostModel model([&](const std::string& b, const std::vector<NodeId>& nodes) {
      std::string key = b;
      for (NodeId m : nodes) {
        key.push_back(',');
        key.append(std::to_string(m));
      }
      auto it = table.find(key);
      if (it != table.end()) return it->second;
      // A few candidates "fail to build"; the reference always works.
      double ms =
          (b != "reference" && rng() % 8 == 0) ? -1.0 : 1.0 + static_cast<double>(rng() % 90) / 10;
      return table[key] = ms;
    });
    Setup s = cost_all(ctx, g, r, model);
    REQUIRE(s.cands.size() <= 22);
    const std::vector<double> costs = edge_costs(s.costs);
    auto found = op_level_search(g, s.cands, costs, {});
    REQUIRE(found.ok());
    const double expected = brute_force(g, r, s.cands, costs);
    INFO("trial " << trial << "\n" << print_graph(g));
    CHECK(found->cost == Approx(expected));
    Placement p;
    for (size_t c : found->chosen)
      p.groups.push_back({s.cands[c].nodes, s.cands[c].backend->name(), "", -1, {}});
    CHECK(validate_placement(g, r, p).ok());
    cyclic_cases += found->ready_order;
    // Boundaries charged by backend: exact too, and what its cover pays.
    std::vector<double> value_ms(g.values().size());
    for (double& ms : value_ms) ms = static_cast<double>(rng() % 30) / 10;
    const BoundaryCharges charges = boundary_charges(s.cands, value_ms);
    const std::vector<double> kernels = kernel_costs(s.costs);
    auto charged = op_level_search(g, s.cands, kernels, {}, {}, &charges);
    REQUIRE(charged.ok());
    CHECK(charged->cost ==
          Approx(brute_force(g, r, s.cands, kernels, [&](const std::vector<size_t>& genes) {
            return charged_boundaries(g, s.cands, charges, genes);
          })));
    double paid = charged_boundaries(g, s.cands, charges, charged->chosen);
    for (size_t c : charged->chosen) paid += kernels[c];
    CHECK(charged->cost == Approx(paid));
  }
  // The random candidate sets include groups that are not path-connected, so the second pass
  // runs in some trials.
  CHECK(cyclic_cases > 0);
}

TEST_CASE("a cheapest cover with mutually dependent groups is searched again", "[op-level]") {
  // n0 a1=Relu(x)  n1 b2=Neg(x)  n2 b1=Neg(a1)  n3 a2=Relu(b2): {0,3} and {1,2} are each convex,
  // but A feeds B (n0->n2) and B feeds A (n1->n3).
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {4}});
  ValueId a1 = *b.add("Relu", {x});
  ValueId b2 = *b.add("Neg", {x});
  b.add_output(*b.add("Neg", {a1}));
  b.add_output(*b.add("Relu", {b2}));
  Graph g = *b.finish();
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("A", {}, {{0, 3}})).ok());
  REQUIRE(r.add(fake_backend("B", {}, {{1, 2}})).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  FunctionCostModel model([](const std::string& be, const std::vector<NodeId>& nodes) {
    if (be == "reference") return 10.0;
    return nodes == std::vector<NodeId>{0, 3} ? 1.0 : 2.0;
  });
  Setup s = cost_all(ctx, g, r, model);
  auto found = op_level_search(g, s.cands, edge_costs(s.costs), {});
  REQUIRE(found.ok());
  CHECK(found->ready_order);
  CHECK(found->cost == Approx(21.0));
  CHECK(describe_chosen(s.cands, found->chosen) ==
        Strings{"A{0,3}", "reference{1}", "reference{2}"});
  REQUIRE(found->notes.size() == 1);
  CHECK_THAT(found->notes[0], Catch::Contains("cycle"));
}

TEST_CASE("op-level search from fixed groups fills only the rest", "[op-level]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("gemm", kGemm)).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  FunctionCostModel model(
      [](const std::string& b, const std::vector<NodeId>&) { return b == "gemm" ? 1.0 : 3.0; });
  Setup s = cost_all(ctx, g, r, model);
  auto found = op_level_search(g, s.cands, edge_costs(s.costs),
                               {NodeSet::of(7, {0}), NodeSet::of(7, {5, 6})});
  REQUIRE(found.ok());
  CHECK(describe_chosen(s.cands, found->chosen) ==
        Strings{"reference{1}", "gemm{2}", "reference{3}", "reference{4}"});
}

TEST_CASE("op-level search errors: uncoverable node, state limit", "[op-level]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("gemm", kGemm)).ok());
  FunctionCostModel model([](const std::string&, const std::vector<NodeId>&) { return 1.0; });
  Setup s = cost_all(ctx, g, r, model);
  auto missing = op_level_search(g, s.cands, edge_costs(s.costs), {});
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.status().message()),
             Catch::Contains("node 'a' (Add) has no usable candidate"));

  REQUIRE(r.add(make_reference_backend()).ok());
  Setup all = cost_all(ctx, g, r, model);
  OpLevelOptions tiny;
  tiny.max_states = 2;
  auto capped = op_level_search(g, all.cands, edge_costs(all.costs), {}, tiny);
  CHECK(capped.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(capped.status().message()), Catch::Contains("more than 2 states"));
}

TEST_CASE("boundaries charged by backend: groups of one backend pass values for nothing",
          "[op-level]") {
  // n0 r=Relu(x)  n1 t=Tanh(r)  n2 s=Sigmoid(t); A and B take each node alone. A,B,A has the
  // cheapest kernels (3), all-A pays no boundary (3.5).
  Context ctx;
  GraphBuilder b(ctx, "chain");
  ValueId x = b.add_input("x", {DType::f32, {8}});
  b.add_output(*b.add("Sigmoid",
                      {*b.add("Tanh", {*b.add("Relu", {x}, nullptr, "r")}, nullptr, "t")}, nullptr,
                      "s"));
  Graph g = *b.finish();
  const std::vector<std::pair<std::string, std::string>> ops = {
      {"relu", "(Relu *)"}, {"tanh", "(Tanh *)"}, {"sigmoid", "(Sigmoid *)"}};
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("A", ops)).ok());
  REQUIRE(r.add(fake_backend("B", ops)).ok());
  FunctionCostModel model(
      [](const std::string& backend, const std::vector<NodeId>& nodes) {
        if (backend == "A") return nodes[0] == 1 ? 1.5 : 1.0;
        return nodes[0] == 1 ? 1.0 : 2.0;
      },
      /*boundary=*/1.0);
  GraphReachability reach(g);
  CandidateSet cands = collect_candidates(g, reach, r.all(), {});
  std::vector<CandidateCost> costs;
  cost_candidates(ctx, g, cands, 0, model, {/*charge_boundaries=*/true}, costs);
  // Every value read from another group charged: all-A pays 2 like A,B,A, which wins.
  auto every = op_level_search(g, cands, edge_costs(costs), {});
  REQUIRE(every.ok());
  CHECK(describe_chosen(cands, every->chosen) == Strings{"A{0}", "B{1}", "A{2}"});
  CHECK(every->cost == Approx(5));
  // By backend: all-A pays none.
  const BoundaryCharges charges = boundary_charges(cands, boundary_value_ms(g, model));
  auto by_backend = op_level_search(g, cands, kernel_costs(costs), {}, {}, &charges);
  REQUIRE(by_backend.ok());
  CHECK(describe_chosen(cands, by_backend->chosen) == Strings{"A{0}", "A{1}", "A{2}"});
  CHECK(by_backend->cost == Approx(3.5));
  CHECK(charged_boundaries(g, cands, charges, by_backend->chosen) == 0);
  CHECK(charged_boundaries(g, cands, charges, every->chosen) == Approx(2));
}
