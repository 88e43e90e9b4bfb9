// Node sets, convexity, subgraph extraction and canonical signatures.
#include <catch2/catch.hpp>

#include "collage/reference.h"
#include "collage/subgraph.h"
#include "common/test_util.h"

using namespace collage;

namespace {
// x -> a=Relu(x) -> b=Sigmoid(a) -> c=Add(a, b) -> d=Tanh(c); e=Exp(x) -> out(d, e)
Graph diamond(const Context& ctx) {
  GraphBuilder b(ctx, "diamond");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId a = *b.add("Relu", {x}, nullptr, "a");
  ValueId s = *b.add("Sigmoid", {a}, nullptr, "b");
  ValueId c = *b.add("Add", {a, s}, nullptr, "c");
  ValueId d = *b.add("Tanh", {c}, nullptr, "d");
  ValueId e = *b.add("Exp", {x}, nullptr, "e");
  b.add_output(d);
  b.add_output(e);
  return *b.finish();
}
}  // namespace

TEST_CASE("node sets", "[subgraph]") {
  NodeSet s = NodeSet::of(130, {0, 64, 129});
  CHECK(s.count() == 3);
  CHECK(s.first() == 0);
  CHECK(s.first_missing() == 1);
  CHECK(s.contains(129));
  CHECK(s.to_vector() == std::vector<NodeId>{0, 64, 129});
  NodeSet t = NodeSet::of(130, {64});
  CHECK(t.is_subset_of(s));
  CHECK(s.minus(t).count() == 2);
  CHECK((s & t) == t);
  NodeSet all(3);
  for (NodeId i = 0; i < 3; ++i) all.insert(i);
  CHECK(all.first_missing() == -1);
}

TEST_CASE("convexity: a path that leaves and re-enters makes a set non-convex", "[subgraph]") {
  Context ctx;
  Graph g = diamond(ctx);
  GraphReachability r(g);
  CHECK(r.is_convex(NodeSet::of(5, {0, 1, 2})));
  CHECK(r.is_convex(NodeSet::of(5, {0, 1})));
  CHECK_FALSE(r.is_convex(NodeSet::of(5, {0, 2})));  // a -> b -> c leaves through b
  CHECK(r.is_convex(NodeSet::of(5, {3, 4})));         // unconnected nodes are convex
  CHECK(r.descendants(0).count() == 3);
}

TEST_CASE("extracted subgraph computes what the parent computes", "[subgraph]") {
  Context ctx;
  Graph g = diamond(ctx);
  auto sub = extract_subgraph(ctx, g, NodeSet::of(5, {1, 2}));
  REQUIRE(sub.ok());
  CHECK(sub->graph.nodes().size() == 2);
  CHECK(sub->parent_inputs == std::vector<ValueId>{g.node(0).outputs[0]});
  CHECK(sub->parent_outputs == std::vector<ValueId>{g.node(2).outputs[0]});

  Tensor x = testing::random_f32({2, 3}, 7);
  auto full = run_reference(g, {x});
  REQUIRE(full.ok());
  auto run_part = [&](std::vector<NodeId> nodes, Tensor in) {
    auto part = extract_subgraph(ctx, g, NodeSet::of(5, nodes));
    REQUIRE(part.ok());
    auto out = run_reference(part->graph, std::vector<Tensor>{in});
    REQUIRE(out.ok());
    return (*out)[0];
  };
  Tensor a = run_part({0}, x);
  auto c = run_reference(sub->graph, std::vector<Tensor>{a});
  REQUIRE(c.ok());
  Tensor d = run_part({3}, (*c)[0]);
  CHECK(d.identical((*full)[0]));
}

TEST_CASE("signatures ignore names and constant values but not types or attributes",
          "[subgraph]") {
  Context ctx;
  auto make = [&](std::string name, float c, int64_t n) {
    GraphBuilder b(ctx, name);
    ValueId x = b.add_input(name + "_x", {DType::f32, {n}});
    ValueId k = b.add_constant(name + "_k", Tensor::from_f32({1}, std::vector<float>{c}));
    ValueId y = *b.add("Mul", {x, k}, nullptr, name + "_mul");
    b.add_output(y);
    return *b.finish();
  };
  CHECK(canonical_signature(make("p", 1.f, 4)) == canonical_signature(make("q", 2.f, 4)));
  CHECK(canonical_signature(make("p", 1.f, 4)) != canonical_signature(make("p", 1.f, 5)));
  CHECK(stable_hash("abc") == stable_hash("abc"));
}
