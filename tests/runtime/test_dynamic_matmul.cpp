// The dynamic module's MatMul, on operands whose shapes are known only at run time: numpy's
// matmul (1-D operands, broadcast batch axes) against the reference, and a mismatch named; a
// 16-bit one, which the module does not run, is not offered.
#include <catch2/catch.hpp>

#include "collage/backends/dynamic.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/ops/elementwise.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "runtime/runtime_test_util.h"

namespace collage::testing {
namespace {

// a f32[2x3x4], axes_a i64[1] -> ReduceSum(a, axes_a) (dimensions kept) and b of `b_shape`,
// axes_b i64[1] -> ReduceSum(b, axes_b, keepdims 0) -> MatMul: both operands' shapes, so the
// MatMul's, are known only when the axes are.
Graph matmul_graph(const Context& ctx, DType t, const Shape& b_shape) {
  GraphBuilder b(ctx, "matmul");
  const ValueId a = b.add_input("a", {t, {2, 3, 4}});
  const ValueId axes_a = b.add_input("axes_a", {DType::i64, {1}});
  const ValueId w = b.add_input("b", {t, b_shape});
  const ValueId axes_b = b.add_input("axes_b", {DType::i64, {1}});
  auto drop = std::make_shared<ReduceAttrs>();
  drop->keepdims = 0;
  auto ra = b.add("ReduceSum", {a, axes_a});
  auto rb = b.add("ReduceSum", {w, axes_b}, drop);
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  auto y = b.add("MatMul", {*ra, *rb});
  INFO(y.status().ToString());
  REQUIRE(y.ok());
  b.add_output(*y);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

Tensor values(DType t, const Shape& shape, uint64_t seed) {
  Tensor f = random_f32(shape, seed);
  if (t == DType::f32) return f;
  Tensor d(DType::f64, shape);
  for (int64_t i = 0; i < f.numel(); ++i) d.data<double>()[i] = f.data<float>()[i];
  return d;
}

TEST_CASE("the dynamic module multiplies matrices whose shapes are known at run time",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_dynamic_backend(backends).ok());
  struct Case {
    int64_t axis_a;
    Shape b;
    int64_t axis_b;
    Shape want;
  };
  const Case cases[] = {
      {0, {2, 4, 6, 9}, 3, {2, 3, 6}},  // [1x3x4] @ [2x4x6]: a's batch of 1 broadcast
      {2, {1, 5, 2}, 2, {2, 3, 5}},     // [2x3x1] @ [1x5]: b broadcast over the batch
      {0, {4, 3}, 1, {1, 3}},           // [1x3x4] @ [4]: a vector, its axis dropped
  };
  for (DType t : {DType::f32, DType::f64})
    for (const Case& c : cases) {
      INFO(dtype_name(t) << " b " << shape_to_string(c.b));
      const Graph g = matmul_graph(ctx, t, c.b);
      auto model = compile_placement(ctx, backends, g, one_group_per_node(g, "dynamic"));
      INFO(model.status().ToString());
      REQUIRE(model.ok());
      const std::vector<Tensor> in = {values(t, {2, 3, 4}, 1),
                                      Tensor::from_i64({1}, std::vector<int64_t>{c.axis_a}),
                                      values(t, c.b, 2),
                                      Tensor::from_i64({1}, std::vector<int64_t>{c.axis_b})};
      auto got = model->run(in);
      INFO(got.status().ToString());
      REQUIRE(got.ok());
      auto want = run_reference(g, in);
      REQUIRE(want.ok());
      CHECK((*got)[0].shape() == c.want);
      CHECK((*got)[0].shape() == (*want)[0].shape());
      CHECK(max_relative_error((*got)[0], (*want)[0]) < 1e-5);
    }
  // [2x3x1] @ [4x5]: the inner dimensions 1 and 4 differ.
  const Graph g = matmul_graph(ctx, DType::f32, {4, 5, 2});
  auto model = compile_placement(ctx, backends, g, one_group_per_node(g, "dynamic"));
  REQUIRE(model.ok());
  auto got = model->run({random_f32({2, 3, 4}, 1), Tensor::from_i64({1}, std::vector<int64_t>{2}),
                         random_f32({4, 5, 2}, 2), Tensor::from_i64({1}, std::vector<int64_t>{2})});
  REQUIRE_FALSE(got.ok());
  CHECK_THAT(std::string(got.status().message()), Catch::Contains("inner dimensions"));
}

// Offered, a 16-bit MatMul would be claimed and then fail to build ("the module runs f32 or f64"):
// the rule leaves it to a backend that runs it (the reference, in process).
TEST_CASE("the dynamic module offers no MatMul whose element type it does not run",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(register_dynamic_backend(backends).ok());
  const Backend& dynamic = *backends.find("dynamic");
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    INFO(dtype_name(t));
    const Graph g = matmul_graph(ctx, t, {2, 4, 6, 9});
    GraphReachability reach(g);
    bool matmul = false;
    for (const Candidate& c : dynamic.candidates(g, reach, RuleOptions{}))
      matmul = matmul || g.node(c.nodes.first()).op_name() == "MatMul";
    CHECK(matmul == (t == DType::f32 || t == DType::f64));
  }
}

// A's columns known only at run time, B's rows static (theta [N, 3, 4] x grid [4, D*H*W] in
// AffineGrid's expansion, turned around): inference keeps A's unknown sizes rather than probing
// them with a stand-in size, which B's 4 rows would contradict; the run checks them.
TEST_CASE("a MatMul whose run-time columns meet static rows is typed and runs on the module",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  GraphBuilder b(ctx, "matmul_static_b");
  const ValueId a = b.add_input("a", {DType::f32, {2, 3, 4}});
  const ValueId axes = b.add_input("axes", {DType::i64, {1}});
  const ValueId w = b.add_input("w", {DType::f32, {4, 5}});
  auto reduced = b.add("ReduceSum", {a, axes});
  REQUIRE(reduced.ok());
  auto y = b.add("MatMul", {*reduced, w});
  INFO(y.status().ToString());
  REQUIRE(y.ok());
  CHECK(type_to_string(b.value(*y).type) == "f32[?x?x5]");
  b.add_output(*y);
  auto g = b.finish();
  REQUIRE(g.ok());
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_dynamic_backend(backends).ok());
  auto model = compile_placement(ctx, backends, *g, one_group_per_node(*g, "dynamic"));
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  for (int64_t axis : {0, 1, 2}) {
    INFO("axis " << axis);
    const std::vector<Tensor> in = {random_f32({2, 3, 4}, 1),
                                    Tensor::from_i64({1}, std::vector<int64_t>{axis}),
                                    random_f32({4, 5}, 2)};
    auto got = model->run(in);
    if (axis == 2) {  // [2x3x1] @ [4x5]
      REQUIRE_FALSE(got.ok());
      CHECK_THAT(std::string(got.status().message()), Catch::Contains("inner dimensions"));
      continue;
    }
    INFO(got.status().ToString());
    REQUIRE(got.ok());
    auto want = run_reference(*g, in);
    REQUIRE(want.ok());
    CHECK((*got)[0].shape() == (*want)[0].shape());
    CHECK(max_relative_error((*got)[0], (*want)[0]) < 1e-5);
  }
}

}  // namespace
}  // namespace collage::testing
