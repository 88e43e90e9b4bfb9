// Dynamic dimensions (kDynamicDim): data-dependent operators give them, inference carries them
// through other operators by probing, the reference executor sizes values as it runs, and
// constant folding turns them static when the data becomes known.
#include <catch2/catch.hpp>

#include "collage/graph.h"
#include "collage/ops.h"
#include "collage/passes.h"
#include "collage/reference.h"

namespace collage {
namespace {

constexpr int64_t kDyn = kDynamicDim;

const Context& ctx() {
  static const Context c;
  return c;
}

std::vector<int64_t> values_of(const Tensor& t) { return t.to_int64_vector(); }

template <typename A, typename F>
std::shared_ptr<const OpAttrs> attrs(F&& f) {
  return make_attrs<A>(std::forward<F>(f));
}

TEST_CASE("a dynamic dimension prints as ? and has no byte size", "[ir][dynamic]") {
  const TensorType t{DType::f32, {kDyn, 4}};
  CHECK(t.is_dynamic());
  CHECK(type_to_string(t) == "f32[?x4]");
  CHECK(t.numel() == -1);
  CHECK(t.bytes() == 0);
  CHECK(type_fits({DType::f32, {7, 4}}, t));
  CHECK_FALSE(type_fits({DType::f32, {7, 5}}, t));
  CHECK_FALSE(type_fits({DType::i64, {7, 4}}, t));
  CHECK_FALSE(type_fits({DType::f32, {7}}, t));
}

TEST_CASE("inference probes dynamic dimensions through ordinary operators", "[ir][dynamic]") {
  GraphBuilder b(ctx());
  const ValueId x = b.add_input("x", {DType::f32, {3, 4}});
  auto nz = b.add("NonZero", {x});
  REQUIRE(nz.ok());
  CHECK(b.value(*nz).type == TensorType{DType::i64, {2, kDyn}});
  auto t = b.add("Transpose", {*nz}, attrs<TransposeAttrs>([](auto& a) { a.perm = {1, 0}; }));
  REQUIRE(t.ok());
  CHECK(b.value(*t).type.shape == Shape{kDyn, 2});
  // Gather rows of a static table by a data-dependent index list: the count is dynamic.
  const ValueId table = b.add_constant("table", Tensor(DType::f32, {3, 5}));
  auto row = b.add("Slice", {*t}, attrs<SliceAttrs>([](auto& a) {
                     a.starts = {0};
                     a.ends = {1};
                     a.axes = {1};
                   }));
  REQUIRE(row.ok());
  auto flat = b.add("Reshape", {*row}, attrs<ReshapeAttrs>([](auto& a) { a.shape = {-1}; }));
  REQUIRE(flat.ok());
  CHECK(b.value(*flat).type.shape == Shape{kDyn});
  auto picked = b.add("Gather", {table, *flat});
  REQUIRE(picked.ok());
  CHECK(b.value(*picked).type.shape == Shape{kDyn, 5});
  // A slice that clamps to the dynamic size stays dynamic, though every large size gives 2.
  auto head = b.add("Slice", {*picked}, attrs<SliceAttrs>([](auto& a) {
                      a.starts = {0};
                      a.ends = {2};
                    }));
  REQUIRE(head.ok());
  CHECK(b.value(*head).type.shape == Shape{kDyn, 5});
  // A reduction over the dynamic axis is static again.
  auto sum = b.add("ReduceSum", {*picked}, attrs<ReduceAttrs>([](auto& a) {
                     a.axes = {0};
                     a.keepdims = 0;
                   }));
  REQUIRE(sum.ok());
  CHECK(b.value(*sum).type == TensorType{DType::f32, {5}});
  b.add_output(*head);
  b.add_output(*sum);
  auto g = b.finish();
  REQUIRE(g.ok());

  // x's non-zeros are at rows 0, 2, 2: the table's rows 0, 2, 2 are gathered.
  Tensor in = Tensor::from_f32({3, 4}, std::vector<float>{1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 3});
  auto outs = run_reference(*g, {in});
  REQUIRE(outs.ok());
  CHECK((*outs)[0].shape() == Shape{2, 5});
  CHECK((*outs)[1].shape() == Shape{5});
}

TEST_CASE("an operator whose inference fails on a dynamic size says so", "[ir][dynamic]") {
  GraphBuilder b(ctx());
  const ValueId x = b.add_input("x", {DType::f32, {6}});
  auto nz = b.add("NonZero", {x});
  REQUIRE(nz.ok());
  // Squeezing the dynamic axis needs it to be 1.
  auto sq = b.add("Squeeze", {*nz}, attrs<SqueezeAttrs>([](auto& a) { a.axes = {1}; }));
  REQUIRE_FALSE(sq.ok());
  CHECK_THAT(std::string(sq.status().message()),
             Catch::Contains("Squeeze") && Catch::Contains("data-dependent shape"));
}

TEST_CASE("inference falls back to smaller probes where the large ones reach 2^62 elements",
          "[ir][dynamic]") {
  // ONNX's expanded AffineGrid concatenates values of three data-dependent dimensions: taken as
  // 1441440 each, the result has more than 2^62 elements, which inference refuses for a real
  // shape; the smaller probes infer it.
  GraphBuilder b(ctx());
  const ValueId dyn3 = b.add_input("d", {DType::i64, {kDyn, kDyn, kDyn}});
  auto cat = b.add("Concat", {dyn3, dyn3, dyn3, dyn3},
                   attrs<ConcatAttrs>([](auto& a) { a.axis = 1; }));
  REQUIRE(cat.ok());
  CHECK(b.value(*cat).type == TensorType{DType::i64, {kDyn, kDyn, kDyn}});
}

TEST_CASE("the reference executor checks run-time shapes against static ones", "[ir][dynamic]") {
  GraphBuilder b(ctx());
  const ValueId x = b.add_input("x", {DType::f32, {4}});
  auto nz = b.add("NonZero", {x});
  REQUIRE(nz.ok());
  // Gathering one column of the [1, n] index list is [1, 1] with any n >= 1, so it is static.
  const ValueId zero = b.add_constant("zero", Tensor::from_i64({1}, std::vector<int64_t>{0}));
  auto first = b.add("Gather", {*nz, zero}, attrs<GatherAttrs>([](auto& a) { a.axis = 1; }));
  REQUIRE(first.ok());
  CHECK(b.value(*first).type == TensorType{DType::i64, {1, 1}});
  b.add_output(*first);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto ok = run_reference(*g, {Tensor::from_f32({4}, std::vector<float>{0, 0, 5, 0})});
  REQUIRE(ok.ok());
  CHECK(values_of((*ok)[0]) == std::vector<int64_t>{2});
  // With no non-zero element the gather is out of range: an error naming the node.
  auto bad = run_reference(*g, {Tensor(DType::f32, {4})});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("Gather"));
}

TEST_CASE("constant folding makes data-dependent shapes static", "[ir][dynamic]") {
  GraphBuilder b(ctx());
  const ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  // NonZero of a computed constant: dynamic when built, static once folded.
  const ValueId c = b.add_constant("c", Tensor::from_f32({2, 3}, std::vector<float>{0, 1, 0, 1, 1, 0}));
  auto copy = b.add("Relu", {c});
  REQUIRE(copy.ok());
  auto nz = b.add("NonZero", {*copy});
  REQUIRE(nz.ok());
  CHECK(b.value(*nz).type.shape == Shape{2, kDyn});
  auto cast = b.add("Cast", {*nz}, attrs<CastAttrs>([](auto& a) { a.to = "f32"; }));
  REQUIRE(cast.ok());
  auto sum = b.add("ReduceSum", {x}, attrs<ReduceAttrs>([](auto& a) { a.keepdims = 0; }));
  REQUIRE(sum.ok());
  b.add_output(*cast);
  b.add_output(*sum);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto folded = run_passes(ctx(), *g);
  REQUIRE(folded.ok());
  const Value& out = folded->value(folded->outputs()[0]);
  CHECK(out.type == TensorType{DType::f32, {2, 3}});
  REQUIRE(folded->constant_of(folded->outputs()[0]));
}

TEST_CASE("NonZero, Unique and NonMaxSuppression infer exact shapes from constants",
          "[ops][dynamic]") {
  GraphBuilder b(ctx());
  const ValueId v = b.add_constant("v", Tensor::from_i64({6}, std::vector<int64_t>{3, 1, 3, 0, 1, 3}));
  auto u = b.add_node("Unique", {v}, nullptr, "u", 4);
  REQUIRE(u.ok());
  CHECK(b.value((*u)[0]).type == TensorType{DType::i64, {3}});
  CHECK(b.value((*u)[2]).type == TensorType{DType::i64, {6}});
  const ValueId boxes = b.add_constant(
      "boxes", Tensor::from_f32({1, 3, 4}, std::vector<float>{0, 0, 1, 1, 0, 0, 1, 1.1f, 5, 5, 6,
                                                             6}));
  const ValueId scores =
      b.add_constant("scores", Tensor::from_f32({1, 1, 3}, std::vector<float>{0.9f, 0.8f, 0.7f}));
  const ValueId max_out = b.add_constant("m", Tensor::from_i64({1}, std::vector<int64_t>{10}));
  const ValueId iou = b.add_constant("iou", Tensor::from_f32({1}, std::vector<float>{0.5f}));
  auto nms = b.add("NonMaxSuppression", {boxes, scores, max_out, iou});
  REQUIRE(nms.ok());
  // The second box overlaps the first by 1/1.1 and is suppressed.
  CHECK(b.value(*nms).type == TensorType{DType::i64, {2, 3}});
  b.add_output((*u)[0]);
  b.add_output(*nms);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto outs = run_reference(*g, {});
  REQUIRE(outs.ok());
  CHECK(values_of((*outs)[0]) == std::vector<int64_t>{0, 1, 3});
  CHECK(values_of((*outs)[1]) == std::vector<int64_t>{0, 0, 0, 0, 0, 2});
}

TEST_CASE("NonMaxSuppression refuses an IoU threshold outside [0, 1]", "[ops][dynamic]") {
  GraphBuilder b(ctx());
  const ValueId boxes = b.add_input("boxes", {DType::f32, {1, 2, 4}});
  const ValueId scores = b.add_input("scores", {DType::f32, {1, 1, 2}});
  const ValueId max_out = b.add_constant("m", Tensor::from_i64({1}, std::vector<int64_t>{1}));
  const ValueId iou = b.add_constant("iou", Tensor::from_f32({1}, std::vector<float>{1.5f}));
  auto nms = b.add("NonMaxSuppression", {boxes, scores, max_out, iou});
  REQUIRE(nms.ok());
  b.add_output(*nms);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto outs = run_reference(*g, {Tensor(DType::f32, {1, 2, 4}), Tensor(DType::f32, {1, 1, 2})});
  REQUIRE_FALSE(outs.ok());
  CHECK_THAT(std::string(outs.status().message()),
             Catch::Contains("NonMaxSuppression") && Catch::Contains("iou_threshold"));
}

}  // namespace
}  // namespace collage
