// ONNX shape-like inputs computed at run time (Reduce axes, Reshape shape, Slice starts, Range
// bounds, Resize scales, ...): imported as attribute inputs, with the outputs' shapes known when
// the model runs; validated then as at compile time; a constant keeps the static path.
#include <catch2/catch.hpp>

#include "collage/onnx.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "frontends/onnx_test_model.h"

namespace collage::testing {
namespace {

using TP = onnx::TensorProto;
using absl::StatusCode;

Tensor i64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_i64({n}, std::move(v));
}

std::vector<float> floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

// x f32[2x3] = 0..5, reduced by ReduceSum over the axes given as input "axes" (keepdims 0).
OnnxModel reduce_sum_model() {
  OnnxModel m(13);
  m.input("x", TP::FLOAT, {2, 3});
  m.input("axes", TP::INT64, {1});
  auto& n = m.node("ReduceSum", {"x", "axes"}, {"y"}, "sum_by_axes");
  attr_int(n, "keepdims", 0);
  m.output("y");
  return m;
}

Tensor iota_2x3() { return Tensor::from_f32({2, 3}, std::vector<float>{0, 1, 2, 3, 4, 5}); }

TEST_CASE("ReduceSum's axes from a graph input are read when the model runs",
          "[onnx][runtime-attrs]") {
  Context ctx;
  auto g = reduce_sum_model().import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::f32, {kDynamicDim}});
  auto rows = run_reference(*g, {iota_2x3(), i64s({1})});
  INFO(rows.status().ToString());
  REQUIRE(rows.ok());
  CHECK(floats((*rows)[0]) == std::vector<float>{3, 12});
  auto cols = run_reference(*g, {iota_2x3(), i64s({-2})});
  REQUIRE(cols.ok());
  CHECK(floats((*cols)[0]) == std::vector<float>{3, 5, 7});
  // An axis out of range is the error the compile-time path gives, naming node and input.
  auto bad = run_reference(*g, {iota_2x3(), i64s({2})});
  check_error(bad.status(), StatusCode::kInvalidArgument, "sum_by_axes");
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("out of range") && Catch::Contains("axes [2]"));
}

TEST_CASE("a constant axes input keeps the static path", "[onnx][runtime-attrs]") {
  Context ctx;
  OnnxModel m = reduce_sum_model();
  m.graph().mutable_input()->RemoveLast();
  m.initializer("axes", i64s({1}));
  auto g = m.import(ctx);
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::f32, {2}});
  REQUIRE(g->nodes().size() == 1);
  CHECK(g->nodes()[0].inputs.size() == 1);
}

TEST_CASE("Reshape's shape from a graph input is checked against the element count",
          "[onnx][runtime-attrs]") {
  Context ctx;
  OnnxModel m(14);
  m.input("x", TP::FLOAT, {2, 3});
  m.input("shape", TP::INT64, {2});
  m.node("Reshape", {"x", "shape"}, {"y"}, "reshape_by_input");
  m.output("y");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type.shape == Shape{kDynamicDim, kDynamicDim});
  auto y = run_reference(*g, {iota_2x3(), i64s({3, -1})});
  INFO(y.status().ToString());
  REQUIRE(y.ok());
  CHECK((*y)[0].shape() == Shape{3, 2});
  CHECK(floats((*y)[0]) == floats(iota_2x3()));
  auto bad = run_reference(*g, {iota_2x3(), i64s({4, 2})});
  check_error(bad.status(), StatusCode::kInvalidArgument, "reshape_by_input");
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("cannot reshape"));
  auto negative = run_reference(*g, {iota_2x3(), i64s({-3, 2})});
  check_error(negative.status(), StatusCode::kInvalidArgument, "invalid entry -3");
}

TEST_CASE("Slice's starts and Range's bounds from graph inputs", "[onnx][runtime-attrs]") {
  Context ctx;
  OnnxModel m(13);
  m.input("x", TP::FLOAT, {2, 3});
  m.input("starts", TP::INT64, {1});
  m.input("limit", TP::INT64, {});
  m.initializer("ends", i64s({100}));
  m.initializer("axes", i64s({1}));
  m.initializer("start", Tensor::scalar_i64(0));
  m.initializer("delta", Tensor::scalar_i64(2));
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  m.node("Range", {"start", "limit", "delta"}, {"r"});
  m.output("y").output("r");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type.shape == Shape{kDynamicDim, kDynamicDim});
  CHECK(g->value(g->outputs()[1]).type.shape == Shape{kDynamicDim});
  auto out = run_reference(*g, {iota_2x3(), i64s({1}), Tensor::scalar_i64(7)});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == Shape{2, 2});
  CHECK(floats((*out)[0]) == std::vector<float>{1, 2, 4, 5});
  CHECK((*out)[1].to_int64_vector() == std::vector<int64_t>{0, 2, 4, 6});
}

TEST_CASE("Resize's scales from a graph input", "[onnx][runtime-attrs]") {
  Context ctx;
  OnnxModel m(13);
  m.input("x", TP::FLOAT, {1, 1, 2, 2});
  m.input("scales", TP::FLOAT, {4});
  m.node("Resize", {"x", "", "scales"}, {"y"}, "resize_by_input");
  m.output("y");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  const Tensor x = Tensor::from_f32({1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4});
  auto y = run_reference(*g, {x, Tensor::from_f32({4}, std::vector<float>{1, 1, 2, 2})});
  INFO(y.status().ToString());
  REQUIRE(y.ok());
  CHECK((*y)[0].shape() == Shape{1, 1, 4, 4});
  CHECK(floats((*y)[0]).front() == 1);
  CHECK(floats((*y)[0]).back() == 4);
  // A scales input of the wrong kind is refused when the model is imported.
  OnnxModel ints(13);
  ints.input("x", TP::FLOAT, {1, 1, 2, 2});
  ints.input("scales", TP::INT64, {4});
  ints.node("Resize", {"x", "", "scales"}, {"y"}, "resize_by_ints");
  ints.output("y");
  check_error(ints.import(ctx).status(), StatusCode::kInvalidArgument,
              "input 2 (scales) must be a floating-point list");
}

TEST_CASE("Dropout's ratio and training_mode from graph inputs", "[onnx][runtime-attrs]") {
  Context ctx;
  OnnxModel m(13);
  m.input("x", TP::FLOAT, {2, 3});
  m.input("r", TP::FLOAT, {});
  m.input("t", TP::BOOL, {});
  m.node("Dropout", {"x", "r", "t"}, {"y", "mask"}, "drop");
  m.output("y").output("mask");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::f32, {2, 3}});
  auto run = [&](float ratio, bool training) {
    Tensor t(DType::boolean, {});
    t.data<uint8_t>()[0] = training ? 1 : 0;
    return run_reference(*g, {iota_2x3(), Tensor::scalar_f32(ratio), t});
  };
  // Inference, and training with ratio 0: the identity and an all-true mask.
  for (auto [ratio, training] : {std::pair{0.5f, false}, std::pair{0.f, true}}) {
    auto out = run(ratio, training);
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(floats((*out)[0]) == floats(iota_2x3()));
    CHECK((*out)[1].data<uint8_t>()[5] == 1);
  }
  check_error(run(0.5f, true).status(), StatusCode::kUnimplemented,
              "training_mode is true with a ratio other than 0");
}

TEST_CASE("Upsample 9's scales from a graph input", "[onnx][runtime-attrs]") {
  Context ctx;
  OnnxModel m(9);
  m.input("x", TP::FLOAT, {1, 1, 2, 3});
  m.input("scales", TP::FLOAT, {4});
  m.node("Upsample", {"x", "scales"}, {"y"}, "up");
  m.output("y");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto out = run_reference(*g, {Tensor::from_f32({1, 1, 2, 3}, std::vector<float>{0, 1, 2, 3, 4, 5}),
                                Tensor::from_f32({4}, std::vector<float>{1, 1, 2, 1})});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == Shape{1, 1, 4, 3});
  CHECK(floats((*out)[0]) == std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
}

}  // namespace
}  // namespace collage::testing
