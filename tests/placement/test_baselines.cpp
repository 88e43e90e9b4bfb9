// The single:NAME and greedy baselines on hand-built graphs with fake backends (expected
// placements written down), placement validation and the JSON report.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "collage/executor.h"
#include "placement/baselines.h"
#include "placement_fakes.h"

using namespace collage;

namespace {

using testing::describe;

std::unique_ptr<Backend> fake(std::string name,
                              std::vector<std::pair<std::string, std::string>> patterns) {
  return testing::fake_backend(std::move(name), std::move(patterns));
}

// A backend whose only rule ("fixed") offers fixed node sets.
std::unique_ptr<Backend> fixed(std::string name, std::vector<std::vector<NodeId>> sets) {
  return testing::fake_backend(std::move(name), {}, std::move(sets));
}

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

using Strings = std::vector<std::string>;

PlacedGroup placed(size_t num_nodes, const std::vector<NodeId>& nodes, std::string backend) {
  PlacedGroup p;
  p.nodes = NodeSet::of(num_nodes, nodes);
  p.backend = std::move(backend);
  return p;
}

}  // namespace

TEST_CASE("single:NAME takes the backend's maximal candidates, the rest to the fallback",
          "[baselines]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake("gemm", kGemm)).ok());
  REQUIRE(r.add(fake("ew", kElementwise)).ok());
  REQUIRE(r.add(make_reference_backend()).ok());

  auto p = place_single(g, r, "gemm");
  REQUIRE(p.ok());
  CHECK(p->strategy == "single:gemm");
  CHECK(describe(*p) ==
        Strings{"gemm{0,1}", "gemm{2}", "reference{3}", "reference{4}", "gemm{5}", "reference{6}"});
  CHECK(p->groups[0].origin == "mm_relu");
  CHECK(p->groups[2].origin == "single-node");
  CHECK(p->notes == Strings{"gemm claimed 4 of 7 nodes", "fallback reference runs 3 nodes"});

  auto e = place_baseline("single:ew", g, r);
  REQUIRE(e.ok());
  CHECK(describe(*e) ==
        Strings{"reference{0}", "ew{1}", "reference{2}", "ew{3,4}", "reference{5}", "ew{6}"});
  auto ref = place_baseline("single:reference", g, r);
  REQUIRE(ref.ok());
  CHECK(ref->groups.size() == 7);
}

TEST_CASE("greedy: backends claim regions in registry order", "[baselines]") {
  Context ctx;
  Graph g = mlp(ctx);
  SECTION("gemm first") {
    BackendRegistry r;
    REQUIRE(r.add(make_reference_backend()).ok());  // the fallback takes no part in the order
    REQUIRE(r.add(fake("gemm", kGemm)).ok());
    REQUIRE(r.add(fake("ew", kElementwise)).ok());
    auto p = place_greedy(g, r);
    REQUIRE(p.ok());
    CHECK(p->strategy == "greedy");
    CHECK(describe(*p) == Strings{"gemm{0,1}", "gemm{2}", "ew{3,4}", "gemm{5}", "ew{6}"});
  }
  SECTION("elementwise first: gemm's smaller candidate fills the gap") {
    BackendRegistry r;
    REQUIRE(r.add(fake("ew", kElementwise)).ok());
    REQUIRE(r.add(fake("gemm", kGemm)).ok());
    REQUIRE(r.add(make_reference_backend()).ok());
    auto p = place_baseline("greedy", g, r);
    REQUIRE(p.ok());
    CHECK(describe(*p) == Strings{"gemm{0}", "ew{1}", "gemm{2}", "ew{3,4}", "gemm{5}", "ew{6}"});
  }
}

TEST_CASE("greedy never forms groups that depend on each other", "[baselines]") {
  // n0 a1=Relu(x)  n1 b2=Neg(x)  n2 b1=Neg(a1)  n3 a2=Relu(b2): {0,3} and {1,2} are each convex,
  // but together group A feeds group B (n0->n2) and B feeds A (n1->n3).
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {4}});
  ValueId a1 = *b.add("Relu", {x});
  ValueId b2 = *b.add("Neg", {x});
  b.add_output(*b.add("Neg", {a1}));
  b.add_output(*b.add("Relu", {b2}));
  Graph g = *b.finish();
  BackendRegistry r;
  REQUIRE(r.add(fixed("A", {{0, 3}})).ok());
  REQUIRE(r.add(fixed("B", {{1, 2}})).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  auto p = place_greedy(g, r);
  REQUIRE(p.ok());
  CHECK(describe(*p) == Strings{"reference{1}", "A{0,3}", "reference{2}"});

  Placement bad;
  bad.groups = {placed(4, {0, 3}, "A"), placed(4, {1, 2}, "B")};
  absl::Status s = validate_placement(g, r, bad);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::Contains("groups depend on each other in a cycle"));
}

TEST_CASE("the fallback fuses with its own candidates; regions merge on request", "[baselines]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake("gemm", kGemm)).ok());
  REQUIRE(r.add(fake("fuser", {{"add_tanh", "(Tanh (Add * *))"}, {"sigmoid", "(Sigmoid *)"}}))
              .ok());
  REQUIRE(r.add(fake("ew", {{"unary", "(Relu|Tanh|Sigmoid *)"}, {"add", "(Add * *)"}})).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  BaselineOptions fuse;
  fuse.fallback = "fuser";
  auto p = place_single(g, r, "gemm", fuse);
  REQUIRE(p.ok());
  CHECK(describe(*p) == Strings{"gemm{0,1}", "gemm{2}", "fuser{3,4}", "gemm{5}", "fuser{6}"});
  CHECK(p->groups[2].origin == "add_tanh");
  CHECK(p->groups[4].origin == "sigmoid");

  BaselineOptions merge;
  merge.merge_regions = true;
  auto m = place_single(g, r, "ew", merge);
  REQUIRE(m.ok());
  CHECK(describe(*m) ==
        Strings{"reference{0}", "ew{1}", "reference{2}", "ew{3,4}", "reference{5}", "ew{6}"});
  CHECK(m->groups[3].origin == "add+unary");
}

TEST_CASE("a node no backend proposes goes to none: an error names it and why", "[baselines]") {
  // The fallback proposes Add+Tanh only: Relu and Sigmoid (n1, n6) are nobody's. Handed to the
  // fallback anyway, they would fail at its build ("build failed") instead of here.
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake("gemm", {{"mm", "(MatMul * const)"}})).ok());
  REQUIRE(r.add(fake("fuser", {{"add_tanh", "(Tanh (Add * *))"}})).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  BaselineOptions fuse;
  fuse.fallback = "fuser";
  for (const char* strategy : {"single:gemm", "greedy"}) {
    INFO(strategy);
    auto p = place_baseline(strategy, g, r, fuse);
    CHECK(p.status().code() == absl::StatusCode::kNotFound);
    CHECK(std::string(p.status().message()) ==
          std::string(strategy) +
              ": Relu 'r1' (f32[4x4]) runs on no selected backend: no backend proposes it (gemm, "
              "fuser)");
  }
  // A node whose only candidate lost to a group claimed before: the fallback offers r1 with m2,
  // which gemm claimed.
  REQUIRE(r.add(fixed("late", {{1, 2}})).ok());
  BaselineOptions late;
  late.fallback = "late";
  auto q = place_single(g, r, "gemm", late);
  REQUIRE_FALSE(q.ok());
  CHECK_THAT(std::string(q.status().message()),
             Catch::Contains("the groups proposed with it, on late (fixed: 2 nodes), overlap "
                             "groups claimed before"));
  // With the reference as the fallback every node runs.
  CHECK(place_single(g, r, "gemm").ok());
}

TEST_CASE("baseline errors", "[baselines]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake("gemm", kGemm)).ok());
  auto no_fallback = place_greedy(g, r);
  CHECK(no_fallback.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(no_fallback.status().message()),
             Catch::Contains("fallback backend 'reference' is not registered"));
  REQUIRE(r.add(make_reference_backend()).ok());
  CHECK_THAT(std::string(place_baseline("single:cudnn", g, r).status().message()),
             Catch::Contains("backend 'cudnn' is not registered"));
  CHECK_THAT(std::string(place_baseline("best", g, r).status().message()),
             Catch::Contains("unknown baseline strategy 'best'"));
  CHECK_FALSE(place_baseline("single:", g, r).ok());
}

TEST_CASE("validate_placement checks the cover and orders groups", "[baselines]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(make_reference_backend()).ok());
  auto group = [&](std::vector<NodeId> nodes, std::string backend = "reference") {
    return placed(7, nodes, std::move(backend));
  };
  auto error = [&](Placement p) {
    absl::Status s = validate_placement(g, r, p);
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  Placement p;
  p.groups = {group({5, 6}), group({2, 3, 4}), group({0, 1})};
  REQUIRE(validate_placement(g, r, p).ok());
  CHECK(describe(p) == Strings{"reference{0,1}", "reference{2,3,4}", "reference{5,6}"});

  p.groups = {group({0, 1}), group({2, 3, 4})};
  CHECK_THAT(error(p), Catch::Contains("node 'm3' is in no group"));
  p.groups = {group({0, 1}), group({1, 2, 3, 4}), group({5, 6})};
  CHECK_THAT(error(p),
             Catch::Contains("group 1 (reference: r1 m2 a t): node 'r1' is also in group 0"));
  p.groups = {group({0, 2}), group({1}), group({3, 4, 5, 6})};
  CHECK_THAT(error(p), Catch::Contains("group 0 (reference: m1 m2): not convex"));
  p.groups = {group({0, 1, 2, 3, 4, 5, 6}, "tpu")};
  CHECK_THAT(error(p), Catch::Contains("no backend named 'tpu' is registered"));
  p.groups = {group({0, 1, 2, 3, 4, 5}), PlacedGroup{NodeSet(7), "reference", "", -1, {}}};
  CHECK_THAT(error(p), Catch::Contains("group 1 (reference:): no nodes"));
  p.groups = {group({0, 1, 2, 3, 4, 5, 6})};
  p.groups[0].nodes = NodeSet::of(8, {0, 1, 2, 3, 4, 5, 6});
  CHECK_THAT(error(p), Catch::Contains("a node set over 8 nodes, the graph has 7"));
}

TEST_CASE("placement JSON lists groups by node name", "[baselines]") {
  Context ctx;
  Graph g = mlp(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake("gemm", kGemm)).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  auto p = place_single(g, r, "gemm");
  REQUIRE(p.ok());
  p->groups[0].cost_ms = 0.25;
  p->groups[0].alternatives.push_back({"reference", "single-node", 1.5, "slower"});
  auto j = nlohmann::json::parse(p->to_json(g));
  CHECK(j["strategy"] == "single:gemm");
  REQUIRE(j["groups"].size() == 6);
  CHECK(j["groups"][0]["backend"] == "gemm");
  CHECK(j["groups"][0]["origin"] == "mm_relu");
  CHECK(j["groups"][0]["nodes"] == nlohmann::json::array({"m1", "r1"}));
  CHECK(j["groups"][0]["cost_ms"] == 0.25);
  CHECK(j["groups"][0]["alternatives"][0]["note"] == "slower");
  CHECK(j["groups"][0]["alternatives"][0]["cost_ms"] == 1.5);
  CHECK(j["notes"][0] == "gemm claimed 4 of 7 nodes");
}
