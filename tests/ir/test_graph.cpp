// Graph IR: builder, verifier, printer, names and error reporting.
#include <catch2/catch.hpp>
#include <limits>

#include "collage/graph.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "common/test_util.h"

using namespace collage;

TEST_CASE("builder infers types and keeps topological order", "[ir]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId c = b.add_constant("c", Tensor::from_f32({3}, std::vector<float>{1, 2, 3}));
  auto sum = b.add("Add", {x, c}, nullptr, "add");
  REQUIRE(sum.ok());
  auto r = b.add("Relu", {*sum});
  REQUIRE(r.ok());
  b.add_output(*r);
  auto g = b.finish();
  REQUIRE(g.ok());
  CHECK(g->nodes().size() == 2);
  CHECK(g->value(*r).type == TensorType{DType::f32, {2, 3}});
  CHECK(g->node(0).name == "add");
  CHECK(g->users()[x] == std::vector<NodeId>{0});
  CHECK(g->constant_of(c) != nullptr);
  CHECK(g->parameter_count() == 3);
  CHECK(verify_graph(ctx, *g).ok());
}

TEST_CASE("builder errors name the operator and node", "[ir]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId y = b.add_input("y", {DType::f32, {4, 3}});

  auto unknown = b.add("NoSuchOp", {x}, nullptr, "n0");
  CHECK(unknown.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(unknown.status().message()),
             Catch::Contains("unknown operator 'NoSuchOp'") && Catch::Contains("n0"));

  auto arity = b.add("Relu", {x, y}, nullptr, "r");
  CHECK(arity.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(arity.status().message()), Catch::Contains("Relu 'r'"));

  auto shapes = b.add("Add", {x, y}, nullptr, "bad_add");
  CHECK(shapes.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(shapes.status().message()), Catch::Contains("Add 'bad_add'"));

  // Failed additions leave nothing behind.
  b.add_output(x);
  auto g = b.finish();
  REQUIRE(g.ok());
  CHECK(g->nodes().empty());
}

TEST_CASE("shapes of 2^62 elements or more are refused with the node and port named", "[ir]") {
  Context ctx;
  GraphBuilder b(ctx);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // An empty axis does not hide the others: their strides would still overflow.
  ValueId huge = b.add_input("huge", {DType::f32, {0, 2, kMax}});
  auto relu = b.add("Relu", {huge}, nullptr, "r");
  CHECK(relu.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(relu.status().message()),
             Catch::Contains("Relu 'r': input 0 (f32[0x2x9223372036854775807]) has 2^62"));
  // An output whose count overflows although each input's fits.
  ValueId a = b.add_input("a", {DType::f32, {int64_t{1} << 31, 1}});
  ValueId c = b.add_input("c", {DType::f32, {1, int64_t{1} << 31}});
  auto sum = b.add("Add", {a, c}, nullptr, "outer");
  CHECK_THAT(std::string(sum.status().message()),
             Catch::Contains("Add 'outer': output 0 (f32[2147483648x2147483648]) has 2^62"));
  ValueId big = b.add_input("big", {DType::f32, {int64_t{1} << 30, 1 << 30}});
  CHECK(b.add("Relu", {big}).ok());
}

TEST_CASE("names are made unique", "[ir]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId a = b.add_input("t", {DType::f32, {1}});
  ValueId c = b.add_input("t", {DType::f32, {1}});
  CHECK(b.value(a).name == "t");
  CHECK(b.value(c).name == "t_1");
  auto n1 = b.add("Relu", {a}, nullptr, "n");
  auto n2 = b.add("Relu", {c}, nullptr, "n");
  REQUIRE(n1.ok());
  REQUIRE(n2.ok());
  b.add_output(*n2);
  auto g = b.finish();
  REQUIRE(g.ok());
  CHECK(g->node(0).name == "n");
  CHECK(g->node(1).name == "n_1");
}

TEST_CASE("printer shows types, attributes and returns", "[ir]") {
  Context ctx;
  GraphBuilder b(ctx, "tiny");
  ValueId x = b.add_input("x", {DType::f32, {1, 4}});
  auto r = b.add("LeakyRelu", {x}, make_attrs<LeakyReluAttrs>([](auto& a) { a.alpha = 0.5f; }), "lr");
  REQUIRE(r.ok());
  b.add_output(*r);
  auto g = b.finish();
  REQUIRE(g.ok());
  std::string text = print_graph(*g);
  CHECK_THAT(text, Catch::Contains("graph tiny(%x: f32[1x4])"));
  CHECK_THAT(text, Catch::Contains("%lr: f32[1x4] = LeakyRelu(%x) {alpha=0.5}"));
  CHECK_THAT(text, Catch::Contains("return %lr"));
}

TEST_CASE("reference executor checks input types", "[ir]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {2}});
  auto r = b.add("Relu", {x});
  REQUIRE(r.ok());
  b.add_output(*r);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto bad = run_reference(*g, {Tensor(DType::f32, {3})});
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("input 'x'"));
  auto good = run_reference(*g, {Tensor::from_f32({2}, std::vector<float>{-1, 2})});
  REQUIRE(good.ok());
  CHECK((*good)[0].data<float>()[0] == 0.f);
  CHECK((*good)[0].data<float>()[1] == 2.f);
}
