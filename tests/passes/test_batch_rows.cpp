// trace_batch_rows: which graphs keep batch rows apart (so that a smaller batch may be padded to a
// compiled one), where the batch axis of each output ends up, and the node named when rows mix.
#include <catch2/catch.hpp>

#include "collage/graph.h"
#include "collage/ops.h"
#include "common/test_util.h"
#include "passes/batch_rows.h"

namespace collage {
namespace {

using testing::random_f32;

const Context& ctx() {
  static const Context c;
  return c;
}

template <typename A, typename F>
std::shared_ptr<const OpAttrs> attrs(F&& f) {
  return make_attrs<A>(std::forward<F>(f));
}

absl::StatusOr<std::vector<int>> trace(GraphBuilder& b, std::vector<ValueId> outputs,
                                       const std::vector<int>& axes) {
  for (ValueId v : outputs) b.add_output(v);
  auto g = b.finish();
  REQUIRE(g.ok());
  return trace_batch_rows(*g, axes);
}

TEST_CASE("an attention block keeps batch rows apart", "[passes][batch-rows]") {
  GraphBuilder b(ctx());
  const ValueId x = b.add_input("x", {DType::f32, {3, 5, 8}});  // [batch, seq, hidden]
  const ValueId w = b.add_constant("w", random_f32({8, 8}, 1));
  const ValueId q = *b.add("MatMul", {x, w});
  const ValueId kt = *b.add("Transpose", {q}, attrs<TransposeAttrs>([](auto& a) {
                              a.perm = {0, 2, 1};
                            }));
  const ValueId scores = *b.add("MatMul", {q, kt});  // [3, 5, 5]
  const ValueId probs = *b.add("Softmax", {scores});
  const ValueId ctxv = *b.add("MatMul", {probs, x});
  const ValueId flat = *b.add("Reshape", {ctxv}, attrs<ReshapeAttrs>([](auto& a) {
                                a.shape = {3, 40};
                              }));
  const ValueId mean = *b.add("ReduceMean", {x}, attrs<ReduceAttrs>([](auto& a) {
                                a.axes = {1};
                                a.keepdims = 0;
                              }));
  const ValueId t = *b.add("Transpose", {mean});  // [8, 3]: the batch moves to axis 1
  auto axes = trace(b, {flat, t}, {0});
  INFO(axes.status().ToString());
  REQUIRE(axes.ok());
  CHECK(*axes == std::vector<int>{0, 1});
}

TEST_CASE("an embedding lookup by batched indices is batched on the indices' axis",
          "[passes][batch-rows]") {
  GraphBuilder b(ctx());
  const ValueId ids = b.add_input("ids", {DType::i64, {4, 7}});
  const ValueId table = b.add_constant("table", random_f32({50, 6}, 2));
  const ValueId e = *b.add("Gather", {table, ids});  // [4, 7, 6]
  // A constant whose rows are all equal (a folded Expand of a learned token) may be
  // concatenated with the batch.
  Tensor token(DType::f32, {4, 1, 6});
  for (int64_t i = 0; i < token.numel(); ++i) token.data<float>()[i] = static_cast<float>(i % 6);
  const ValueId cls = b.add_constant("cls", token);
  const ValueId joined = *b.add("Concat", {cls, e}, attrs<ConcatAttrs>([](auto& a) {
                                  a.axis = 1;
                                }));
  auto axes = trace(b, {joined}, {0});
  INFO(axes.status().ToString());
  REQUIRE(axes.ok());
  CHECK(*axes == std::vector<int>{0});
}

TEST_CASE("nodes that mix batch rows are named", "[passes][batch-rows]") {
  SECTION("softmax over the batch axis") {
    GraphBuilder b(ctx());
    const ValueId x = b.add_input("x", {DType::f32, {4, 3}});
    const ValueId y = *b.add("Softmax", {x}, attrs<SoftmaxAttrs>([](auto& a) { a.axis = 0; }),
                             "norm_over_batch");
    auto axes = trace(b, {y}, {0});
    REQUIRE_FALSE(axes.ok());
    CHECK(axes.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK_THAT(std::string(axes.status().message()),
               Catch::Contains("norm_over_batch") && Catch::Contains("over the batch"));
  }
  SECTION("a reshape that merges the batch with another axis") {
    GraphBuilder b(ctx());
    const ValueId x = b.add_input("x", {DType::f32, {4, 3}});
    const ValueId y = *b.add("Reshape", {x}, attrs<ReshapeAttrs>([](auto& a) { a.shape = {12}; }),
                             "flatten_all");
    auto axes = trace(b, {y}, {0});
    REQUIRE_FALSE(axes.ok());
    CHECK_THAT(std::string(axes.status().message()), Catch::Contains("flatten_all"));
  }
  SECTION("a constant that differs from row to row") {
    GraphBuilder b(ctx());
    const ValueId x = b.add_input("x", {DType::f32, {4, 3}});
    const ValueId c = b.add_constant("c", random_f32({4, 3}, 3));
    const ValueId y = *b.add("Add", {x, c}, nullptr, "add_rows");
    auto axes = trace(b, {y}, {0});
    REQUIRE_FALSE(axes.ok());
    CHECK_THAT(std::string(axes.status().message()), Catch::Contains("add_rows"));
  }
  SECTION("an operator not known to keep rows apart") {
    GraphBuilder b(ctx());
    const ValueId x = b.add_input("x", {DType::f32, {4}});
    const ValueId y = *b.add("NonZero", {x}, nullptr, "where_nonzero");
    auto axes = trace(b, {y}, {0});
    REQUIRE_FALSE(axes.ok());
    CHECK_THAT(std::string(axes.status().message()), Catch::Contains("where_nonzero"));
  }
}

TEST_CASE("a batch of 1 is not traced", "[passes][batch-rows]") {
  GraphBuilder b(ctx());
  const ValueId x = b.add_input("x", {DType::f32, {1, 3}});
  const ValueId y = *b.add("Relu", {x});
  auto axes = trace(b, {y}, {0});
  REQUIRE_FALSE(axes.ok());
  CHECK(axes.status().code() == absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace collage
