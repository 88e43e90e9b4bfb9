// Candidate collection: every backend's convex candidates, deduplicated, capped, indexed.
#include <catch2/catch.hpp>

#include "collage/executor.h"
#include "placement/candidates.h"
#include "placement_fakes.h"

using namespace collage;
using namespace collage::testing;

namespace {

// n0 r=Relu(x)  n1 t=Tanh(r)  n2 s=Sigmoid(t)  n3 a=Add(s, x)
Graph chain(const Context& ctx) {
  GraphBuilder b(ctx, "chain");
  ValueId x = b.add_input("x", {DType::f32, {8}});
  ValueId r = *b.add("Relu", {x}, nullptr, "r");
  ValueId t = *b.add("Tanh", {r}, nullptr, "t");
  ValueId s = *b.add("Sigmoid", {t}, nullptr, "s");
  b.add_output(*b.add("Add", {s, x}, nullptr, "a"));
  return *b.finish();
}

}  // namespace

TEST_CASE("candidates of all backends, identical (nodes, backend) once", "[candidates]") {
  Context ctx;
  Graph g = chain(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("ew", {{"relu", "(Relu *)"},
                                    {"relu-again", "(Relu *)"},
                                    {"tanh-relu", "(Tanh (Relu *))"},
                                    {"chain3", "(Sigmoid (Tanh (Relu *)))"}}))
              .ok());
  // {0, 2} is not convex (0 -> 1 -> 2 leaves it): Backend::candidates drops it.
  REQUIRE(r.add(fake_backend("odd", {}, {{0, 2}, {1}})).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  GraphReachability reach(g);
  CandidateSet all = collect_candidates(g, reach, r.all(), {});
  CHECK(all.notes().empty());
  std::vector<std::string> seen;
  for (const Candidate& c : all.all()) {
    Placement p;
    p.groups.push_back({c.nodes, c.backend->name(), c.origin, -1, {}});
    seen.push_back(describe(p)[0] + ":" + c.origin);
  }
  CHECK(seen == std::vector<std::string>{"ew{0,1,2}:chain3", "ew{0,1}:tanh-relu", "ew{0}:relu",
                                         "reference{0}:single-node", "odd{1}:fixed",
                                         "reference{1}:single-node", "reference{2}:single-node",
                                         "reference{3}:single-node"});
  CHECK(all.starting_at(0).size() == 4);
  CHECK(all.starting_at(1).size() == 2);
  CHECK(all.find(NodeSet::of(4, {0, 1}), r.find("ew")) == 1);
  CHECK(all.find(NodeSet::of(4, {0, 1}), r.find("reference")) == -1);
  CHECK(all.with_nodes(NodeSet::of(4, {0})).size() == 2);

  SECTION("a depth cap drops larger candidates and says so") {
    // ew{0,1} has more than one node and leaves out more than one: dropped. ew{0,1,2} leaves
    // out one node only: kept, as the whole graph would be.
    CandidateSet capped = collect_candidates(g, reach, r.all(), {/*max_depth=*/1, 0});
    CHECK(capped.size() == all.size() - 1);
    CHECK(capped.find(NodeSet::of(4, {0, 1}), r.find("ew")) == -1);
    CHECK(capped.find(NodeSet::of(4, {0, 1, 2}), r.find("ew")) >= 0);
    REQUIRE(capped.notes().size() == 1);
    CHECK(capped.notes()[0] == "1 candidates with more than max_depth 1 nodes dropped");
  }
  SECTION("a count cap keeps the smallest") {
    // No depth cap (max_depth 0): on four nodes, every candidate of max_depth 8 would leave
    // out few enough nodes to be kept whatever the count.
    CandidateSet capped = collect_candidates(g, reach, r.all(), {/*max_depth=*/0, /*max_count=*/6});
    CHECK(capped.size() == 6);
    for (const Candidate& c : capped.all()) CHECK(c.nodes.count() == 1);
    REQUIRE(capped.notes().size() == 1);
    CHECK(capped.notes()[0] == "2 of 8 candidates dropped by max_candidates 6 (largest first)");
  }
  SECTION("adding a candidate that is present returns its index") {
    const size_t n = all.size();
    CHECK(all.add({NodeSet::of(4, {0, 1}), r.find("ew"), "again"}) == 1);
    CHECK(all.add({NodeSet::of(4, {2, 3}), r.find("ew"), "new"}) == n);
    CHECK(all.starting_at(2).back() == n);
  }
}

TEST_CASE("the caps keep a candidate of the whole graph, or of all but max_depth nodes",
          "[candidates]") {
  Context ctx;
  Graph g = chain(ctx);
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("whole", {}, {{0, 1, 2, 3}, {0, 1, 2}, {1, 2}})).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  GraphReachability reach(g);
  const NodeSet all_nodes = NodeSet::of(4, {0, 1, 2, 3});

  SECTION("depth") {
    CandidateSet capped = collect_candidates(g, reach, r.all(), {/*max_depth=*/1, 0});
    CHECK(capped.find(all_nodes, r.find("whole")) >= 0);
    // {0, 1, 2} leaves out one node, which a candidate of max_depth 1 covers: kept. {1, 2}
    // leaves out two: the cap drops it.
    CHECK(capped.find(NodeSet::of(4, {0, 1, 2}), r.find("whole")) >= 0);
    CHECK(capped.find(NodeSet::of(4, {1, 2}), r.find("whole")) == -1);
    REQUIRE(capped.notes().size() == 1);
    CHECK(capped.notes()[0] == "1 candidates with more than max_depth 1 nodes dropped");
  }
  SECTION("count") {
    CandidateSet capped = collect_candidates(g, reach, r.all(), {/*max_depth=*/1, /*max_count=*/4});
    CHECK(capped.find(all_nodes, r.find("whole")) >= 0);
    CHECK(capped.find(NodeSet::of(4, {0, 1, 2}), r.find("whole")) >= 0);
    CHECK(capped.find(NodeSet::of(4, {1, 2}), r.find("whole")) == -1);
    CHECK(capped.size() == 6);  // the four single nodes, the whole graph and all but node 3
  }
}

// A whole-model backend's region without a model's first blocks (openvino.region_end's far cuts)
// leaves out more than max_depth nodes: kept while it covers more than half of the graph.
TEST_CASE("the caps keep a candidate covering more than half of the graph", "[candidates]") {
  Context ctx;
  GraphBuilder b(ctx, "relus");
  ValueId v = b.add_input("x", {DType::f32, {8}});
  for (int i = 0; i < 8; ++i)
    v = *b.add("Relu", {v}, nullptr, std::string("r").append(std::to_string(i)));
  b.add_output(v);
  Graph g = *b.finish();
  BackendRegistry r;
  REQUIRE(r.add(fake_backend("whole", {}, {{1, 2, 3, 4, 5, 6, 7}, {3, 4, 5, 6, 7}, {4, 5, 6, 7}}))
              .ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  GraphReachability reach(g);
  CandidateSet capped = collect_candidates(g, reach, r.all(), {/*max_depth=*/2, 0});
  CHECK(capped.find(NodeSet::of(8, {1, 2, 3, 4, 5, 6, 7}), r.find("whole")) >= 0);
  CHECK(capped.find(NodeSet::of(8, {3, 4, 5, 6, 7}), r.find("whole")) >= 0);
  CHECK(capped.find(NodeSet::of(8, {4, 5, 6, 7}), r.find("whole")) == -1);
}
