// The ai.onnx.ml linear and SVM models, Normalizer and ZipMap, and Cast to and from STRING,
// imported and run by the reference executor: small hand-made nodes with known results, and the
// errors that name the node. (Real scikit-learn models against ONNX Runtime: tests/driver/
// test_ml_models.cpp.)
#include <catch2/catch.hpp>
#include <cmath>

#include "collage/onnx.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "frontends/onnx_test_model.h"

namespace collage::testing {
namespace {

using TP = onnx::TensorProto;
using absl::StatusCode;

// A model of one ai.onnx.ml node `op` on input x (f32 [rows x features]).
OnnxModel ml_model(const std::string& op, int64_t rows, int64_t features,
                   const std::vector<std::string>& outputs, onnx::NodeProto** node) {
  OnnxModel m(17);
  onnx::OperatorSetIdProto* ml = m.proto().add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  m.input("x", TP::FLOAT, {rows, features});
  *node = &m.node(op, {"x"}, outputs, "model");
  (*node)->set_domain("ai.onnx.ml");
  for (const auto& o : outputs) m.output(o);
  return m;
}

std::vector<Tensor> run(const OnnxModel& m, const std::vector<Tensor>& inputs,
                        const OnnxImportOptions& options = {}) {
  Context ctx;
  auto g = m.import(ctx, options);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto out = run_reference(*g, inputs);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *std::move(out);
}

std::vector<float> floats(const Tensor& t) {
  REQUIRE(t.dtype() == DType::f32);
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

TEST_CASE("LinearClassifier: scores, softmax and string labels", "[onnx][ml]") {
  onnx::NodeProto* n = nullptr;
  OnnxModel m = ml_model("LinearClassifier", 2, 2, {"label", "scores"}, &n);
  attr_floats(*n, "coefficients", {1, 0, 0, 1, -1, -1});
  attr_floats(*n, "intercepts", {0, 0.5f, 0});
  attr_strings(*n, "classlabels_strings", {"a", "b", "c"});
  attr_string(*n, "post_transform", "SOFTMAX");
  const auto out = run(m, {Tensor::from_f32({2, 2}, std::vector<float>{2, 0, -1, -1})});
  REQUIRE(out[0].dtype() == DType::str);
  CHECK(out[0].data<std::string>()[0] == "a");  // scores 2, 0.5, -2
  CHECK(out[0].data<std::string>()[1] == "c");  // scores -1, -0.5, 2
  const auto p = floats(out[1]);
  const double z = std::exp(2.0) + std::exp(0.5) + std::exp(-2.0);
  CHECK(p[0] == Approx(std::exp(2.0) / z).epsilon(1e-6));
  CHECK(p[0] + p[1] + p[2] == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("LinearClassifier with one row picks the second label where the score is positive",
          "[onnx][ml]") {
  onnx::NodeProto* n = nullptr;
  OnnxModel m = ml_model("LinearClassifier", 2, 1, {"label", "scores"}, &n);
  attr_floats(*n, "coefficients", {2});
  attr_floats(*n, "intercepts", {-1});
  attr_ints(*n, "classlabels_ints", {10, 20});
  const auto out = run(m, {Tensor::from_f32({2, 1}, std::vector<float>{1, 0})});
  CHECK(out[0].to_int64_vector() == std::vector<int64_t>{20, 10});
  CHECK(floats(out[1]) == std::vector<float>{0, 1, 2, -1});  // [1 - s, s], s = 1 and -1

  attr_string(*n, "post_transform", "PROBIT");
  Context ctx;
  check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
              "LinearClassifier 'model': post_transform PROBIT with one coefficient row");
}

TEST_CASE("a malformed linear or SVM model is refused naming the node", "[onnx][ml]") {
  Context ctx;
  onnx::NodeProto* n = nullptr;
  OnnxModel linear = ml_model("LinearClassifier", 2, 3, {"label", "scores"}, &n);
  attr_floats(*n, "coefficients", {1, 2, 3, 4});
  attr_ints(*n, "classlabels_ints", {0, 1});
  check_error(linear.import(ctx).status(), StatusCode::kInvalidArgument,
              "LinearClassifier 'model': coefficients has 4 values, not a multiple of the "
              "input's 3 features");
  OnnxModel svm = ml_model("SVMClassifier", 2, 2, {"label", "scores"}, &n);
  attr_ints(*n, "vectors_per_class", {1, 1});
  attr_floats(*n, "support_vectors", {0, 0, 1, 1});
  attr_floats(*n, "coefficients", {1, -1});
  attr_floats(*n, "rho", {0});
  attr_ints(*n, "classlabels_ints", {0, 1});
  attr_string(*n, "kernel_type", "CUBIC");
  check_error(svm.import(ctx).status(), StatusCode::kInvalidArgument,
              "SVMClassifier 'model': kernel_type is 'CUBIC'");
}

TEST_CASE("SVMClassifier votes and couples pairwise probabilities", "[onnx][ml]") {
  // Three classes, one support vector each at 0, 1 and 2 on a line, linear kernel.
  onnx::NodeProto* n = nullptr;
  OnnxModel m = ml_model("SVMClassifier", 3, 1, {"label", "probabilities"}, &n);
  attr_ints(*n, "vectors_per_class", {1, 1, 1});
  attr_floats(*n, "support_vectors", {0, 1, 2});
  // Decision values: pair (0,1) -x + 0.5, pair (0,2) -2x + 1, pair (1,2) -x + 1.5.
  attr_floats(*n, "coefficients", {0, -1, -1, 0, -1, 0});
  attr_floats(*n, "rho", {0.5f, 1, 1.5f});
  attr_floats(*n, "prob_a", {-4, -4, -4});
  attr_floats(*n, "prob_b", {0, 0, 0});
  attr_ints(*n, "classlabels_ints", {5, 6, 7});
  const auto out = run(m, {Tensor::from_f32({3, 1}, std::vector<float>{-1, 1, 3})});
  CHECK(out[0].to_int64_vector() == std::vector<int64_t>{5, 6, 7});
  const auto p = floats(out[1]);
  for (int r = 0; r < 3; ++r) {
    CHECK(p[3 * r] + p[3 * r + 1] + p[3 * r + 2] == Approx(1.0).epsilon(1e-5));
    for (int c = 0; c < 3; ++c)
      if (c != r) CHECK(p[3 * r + r] > p[3 * r + c]);
  }
}

TEST_CASE("Normalizer divides each row by its norm, leaving a zero row", "[onnx][ml]") {
  onnx::NodeProto* n = nullptr;
  OnnxModel m = ml_model("Normalizer", 2, 2, {"y"}, &n);
  attr_string(*n, "norm", "L2");
  const auto out = run(m, {Tensor::from_f32({2, 2}, std::vector<float>{3, -4, 0, 0})});
  CHECK(floats(out[0]) == std::vector<float>{0.6f, -0.8f, 0, 0});
}

TEST_CASE("ZipMap is refused unless it is asked to be dropped", "[onnx][ml]") {
  onnx::NodeProto* n = nullptr;
  OnnxModel m = ml_model("ZipMap", 2, 2, {"maps"}, &n);
  attr_ints(*n, "classlabels_int64s", {3, 4});
  Context ctx;
  check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
              "ZipMap 'model': makes a sequence of maps");
  OnnxImportOptions drop;
  drop.zipmap = ZipMapMode::probabilities;
  const Tensor p = Tensor::from_f32({2, 2}, std::vector<float>{0.25f, 0.75f, 1, 0});
  CHECK(floats(run(m, {p}, drop)[0]) == floats(p));
  attr_ints(*n, "classlabels_int64s", {3, 4, 5});
  check_error(m.import(ctx, drop).status(), StatusCode::kInvalidArgument,
              "ZipMap 'model': input is f32[2x2], expected f32[Nx3]");
}

TEST_CASE("Cast prints numbers as ONNX Runtime and reads them back", "[onnx][strings]") {
  OnnxModel m(17);
  m.input("x", TP::FLOAT, {5});
  m.input("t", TP::STRING, {3});
  attr_int(m.node("Cast", {"x"}, {"text"}, "print"), "to", TP::STRING);
  attr_int(m.node("Cast", {"t"}, {"n"}, "read"), "to", TP::INT8);
  m.output("text");
  m.output("n");
  const float inf = std::numeric_limits<float>::infinity();
  const auto out =
      run(m, {Tensor::from_f32({5}, std::vector<float>{0.1f, -inf, NAN, 1e30f, -0.f}),
              Tensor::from_strings({3}, std::vector<std::string>{" 12", "-3x", "300"})});
  CHECK(std::vector<std::string>(out[0].data<std::string>(), out[0].data<std::string>() + 5) ==
        std::vector<std::string>{"0.1", "-INF", "NaN", "1e+30", "-0"});
  CHECK(out[1].to_int64_vector() == std::vector<int64_t>{12, -3, 44});  // 300 wraps as int8

  Context ctx;
  auto g = m.import(ctx);
  REQUIRE(g.ok());
  auto bad = run_reference(*g, {Tensor::from_f32({5}, std::vector<float>(5, 0.f)),
                                Tensor::from_strings({3}, std::vector<std::string>{"1", "x", "2"})});
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("'read'") && Catch::Contains("element 1 'x' is not a number"));
}

}  // namespace
}  // namespace collage::testing
