// ONNX import of data-dependent shapes: NonZero, Unique and NonMaxSuppression outputs feeding
// later nodes, sized when the model runs; and what still has to be known at compile time.
#include <catch2/catch.hpp>

#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "frontends/onnx_test_model.h"

namespace collage::testing {
namespace {

using TP = onnx::TensorProto;
using absl::StatusCode;

std::vector<int64_t> ints(const Tensor& t) { return t.to_int64_vector(); }

TEST_CASE("NonZero indices feed a Gather whose size is known at run time", "[onnx][dynamic]") {
  Context ctx;
  OnnxModel m(13);
  m.input("mask", TP::FLOAT, {6});
  m.input("values", TP::FLOAT, {6, 2});
  m.initializer("zero", Tensor::from_i64({1}, std::vector<int64_t>{0}));
  m.node("NonZero", {"mask"}, {"nz"});
  m.node("Squeeze", {"nz", "zero"}, {"idx"});
  m.node("Gather", {"values", "idx"}, {"picked"});
  m.output("picked");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::f32, {kDynamicDim, 2}});
  auto placed = run_passes(ctx, *g);
  REQUIRE(placed.ok());
  Tensor mask = Tensor::from_f32({6}, std::vector<float>{0, 1, 0, 0, 2, 3});
  Tensor values(DType::f32, {6, 2});
  for (int64_t i = 0; i < 12; ++i) values.data<float>()[i] = static_cast<float>(i);
  auto outs = run_reference(*placed, {mask, values});
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  const Tensor& picked = (*outs)[0];
  CHECK(picked.shape() == Shape{3, 2});
  CHECK(std::vector<float>(picked.data<float>(), picked.data<float>() + 6) ==
        std::vector<float>{2, 3, 8, 9, 10, 11});
}

TEST_CASE("the boxes NonMaxSuppression keeps are gathered after it", "[onnx][dynamic]") {
  Context ctx;
  OnnxModel m(17);
  m.input("boxes", TP::FLOAT, {1, 4, 4});
  m.input("scores", TP::FLOAT, {1, 1, 4});
  m.initializer("max_out", Tensor::from_i64({1}, std::vector<int64_t>{10}));
  m.initializer("iou", Tensor::from_f32({1}, std::vector<float>{0.5f}));
  m.initializer("two", Tensor::from_i64({1}, std::vector<int64_t>{2}));
  m.node("NonMaxSuppression", {"boxes", "scores", "max_out", "iou"}, {"selected"});
  auto& gather = m.node("Gather", {"selected", "two"}, {"box_col"});
  attr_int(gather, "axis", 1);
  m.output("box_col");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::i64, {kDynamicDim, 1}});
  Tensor boxes = Tensor::from_f32({1, 4, 4}, std::vector<float>{0, 0, 1, 1,  0, 0.1f, 1, 1.1f,
                                                              2, 2, 3, 3,  2, 2, 3.2f, 3.2f});
  Tensor scores = Tensor::from_f32({1, 1, 4}, std::vector<float>{0.9f, 0.8f, 0.5f, 0.6f});
  auto outs = run_reference(*g, {boxes, scores});
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  // Box 1 overlaps box 0 (IoU 0.82), box 2 overlaps box 3 (0.69): 0 and 3 are kept.
  CHECK(ints((*outs)[0]) == std::vector<int64_t>{0, 3});
}

TEST_CASE("a shape input computed from data-dependent values is refused by name",
          "[onnx][dynamic]") {
  Context ctx;
  OnnxModel m(13);
  m.input("x", TP::FLOAT, {4});
  m.node("NonZero", {"x"}, {"nz"});
  m.node("Reshape", {"x", "nz"}, {"y"}, "reshape_by_data");
  m.output("y");
  check_error(m.import(ctx).status(), StatusCode::kInvalidArgument, "reshape_by_data");
}

TEST_CASE("Unique's four outputs import with dynamic sizes", "[onnx][dynamic]") {
  Context ctx;
  OnnxModel m(11);
  m.input("x", TP::INT64, {7});
  m.node("Unique", {"x"}, {"y", "first", "inverse", "counts"});
  m.output("y").output("first").output("inverse").output("counts");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type.shape == Shape{kDynamicDim});
  CHECK(g->value(g->outputs()[2]).type.shape == Shape{7});
  auto outs =
      run_reference(*g, {Tensor::from_i64({7}, std::vector<int64_t>{4, 2, 4, 4, -1, 2, 9})});
  REQUIRE(outs.ok());
  CHECK(ints((*outs)[0]) == std::vector<int64_t>{-1, 2, 4, 9});
  CHECK(ints((*outs)[1]) == std::vector<int64_t>{4, 1, 0, 6});
  CHECK(ints((*outs)[2]) == std::vector<int64_t>{2, 1, 2, 2, 0, 1, 3});
  CHECK(ints((*outs)[3]) == std::vector<int64_t>{1, 2, 3, 1});
}

}  // namespace
}  // namespace collage::testing
