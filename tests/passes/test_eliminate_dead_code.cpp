// Dead-code elimination: dead nodes and unused constants go, inputs and live nodes stay.
#include <catch2/catch.hpp>

#include "passes/eliminate_dead_code.h"
#include "passes/pass_test_util.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("eliminate_dead_code drops unreachable nodes and unused constants", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId unused_input = b.add_input("unused", {DType::f32, {4}});
  ValueId c = b.add_constant("c", Tensor::from_f32({3}, std::vector<float>{1, 2, 3}));
  b.add_constant("never_read", Tensor::from_f32({2}, std::vector<float>{5, 6}));
  ValueId dead_c = b.add_constant("dead_c", Tensor::from_f32({3}, std::vector<float>{7, 8, 9}));
  ValueId live = add(b, "Add", {x, c}, nullptr, "live");
  ValueId dead = add(b, "Mul", {live, dead_c}, nullptr, "dead");
  add(b, "Relu", {dead}, nullptr, "dead_too");
  b.add_output(add(b, "Tanh", {live}, nullptr, "out"));
  Graph g = finish(b);

  auto r = passes::eliminate_dead_code(ctx, g);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  const Graph& out = **r;
  CHECK(op_names(out) == std::vector<std::string>{"Add", "Tanh"});
  REQUIRE(out.constants().size() == 1);
  CHECK(out.constants()[0].identical(*g.constant_of(c)));
  REQUIRE(out.inputs().size() == 2);
  CHECK(out.value(out.inputs()[1]).name == "unused");
  CHECK(out.value(out.inputs()[1]).type == g.value(unused_input).type);
  CHECK(verify_graph(ctx, out).ok());
  require_same_outputs(g, out);

  // A second run finds nothing to do.
  auto again = passes::eliminate_dead_code(ctx, out);
  REQUIRE(again.ok());
  CHECK_FALSE(again->has_value());
}

TEST_CASE("eliminate_dead_code keeps multi-output nodes with one live output", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {4, 3}});
  auto parts = b.add_node("Split", {x}, nullptr, "split", 2);
  REQUIRE(parts.ok());
  b.add_output((*parts)[1]);
  Graph g = finish(b);
  auto r = passes::eliminate_dead_code(ctx, g);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
}

TEST_CASE("eliminate_dead_code keeps a constant that is a graph output", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2}});
  b.add_output(add(b, "Relu", {x}));
  b.add_output(b.add_constant("k", Tensor::from_f32({2}, std::vector<float>{1, 2})));
  Graph g = finish(b);
  auto r = passes::eliminate_dead_code(ctx, g);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
}
