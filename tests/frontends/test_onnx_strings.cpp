// ONNX string tensors: STRING inputs and initializers imported as str, the string operators and
// LabelEncoder run by the reference executor, and the errors that name the node or tensor.
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

Tensor strs(Shape shape, std::vector<std::string> v) {
  return Tensor::from_strings(std::move(shape), v);
}

std::vector<std::string> texts(const Tensor& t) {
  REQUIRE(t.dtype() == DType::str);
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.numel());
}

// Imports `m` and runs it on the reference executor.
std::vector<Tensor> run(const OnnxModel& m, const std::vector<Tensor>& inputs) {
  Context ctx;
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto out = run_reference(*g, inputs);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *std::move(out);
}

TEST_CASE("StringConcat broadcasts a string initializer over an input", "[onnx][strings]") {
  OnnxModel m(20);
  m.input("x", TP::STRING, {2, 2});
  m.initializer("suffix", strs({2}, {"!", ", bye"}));
  m.node("StringConcat", {"x", "suffix"}, {"y"});
  m.output("y");
  const auto out = run(m, {strs({2, 2}, {"hi", "ok", "", "caf\xc3\xa9"})});
  CHECK(out[0].shape() == Shape{2, 2});
  CHECK(texts(out[0]) ==
        std::vector<std::string>{"hi!", "ok, bye", "!", "caf\xc3\xa9, bye"});
}

TEST_CASE("StringSplit pads to the most pieces and counts them", "[onnx][strings]") {
  OnnxModel m(20);
  m.input("x", TP::STRING, {3});
  auto& n = m.node("StringSplit", {"x"}, {"pieces", "counts"});
  attr_string(n, "delimiter", "--");
  attr_int(n, "maxsplit", 2);
  m.output("pieces");
  m.output("counts");
  Context ctx;
  auto g = m.import(ctx);
  REQUIRE(g.ok());
  // The number of pieces is known only when the model runs.
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::str, {3, kDynamicDim}});
  auto out = run_reference(*g, {strs({3}, {"a--b--c--d", "", "--x"})});
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == Shape{3, 3});
  CHECK(texts((*out)[0]) ==
        std::vector<std::string>{"a", "b", "c--d", "", "", "", "", "x", ""});
  CHECK((*out)[1].to_int64_vector() == std::vector<int64_t>{3, 1, 2});

  OnnxModel ws(20);  // no delimiter: runs of whitespace, empty pieces dropped
  ws.input("x", TP::STRING, {2});
  ws.node("StringSplit", {"x"}, {"pieces", "counts"});
  ws.output("pieces");
  ws.output("counts");
  const auto w = run(ws, {strs({2}, {"  one\ttwo  ", "   "})});
  CHECK(texts(w[0]) == std::vector<std::string>{"one", "two", "", ""});
  CHECK(w[1].to_int64_vector() == std::vector<int64_t>{2, 0});
}

TEST_CASE("StringNormalizer drops stopwords ignoring case and maps Unicode case",
          "[onnx][strings]") {
  OnnxModel m(10);
  m.input("x", TP::STRING, {1, 4});
  auto& n = m.node("StringNormalizer", {"x"}, {"y"});
  attr_string(n, "case_change_action", "UPPER");
  attr_strings(n, "stopwords", {"the", "\xc3\x89t\xc3\xa9"});  // "Été"
  m.output("y");
  const auto out =
      run(m, {strs({1, 4}, {"The", "caf\xc3\xa9", "\xc3\xa9t\xc3\xa9", "stra\xc3\x9f" "e"})});
  CHECK(out[0].shape() == Shape{1, 2});
  CHECK(texts(out[0]) == std::vector<std::string>{"CAF\xc3\x89", "STRA\xc3\x9f" "E"});
  // Every element dropped: one empty string.
  const auto none = run(m, {strs({1, 4}, {"the", "THE", "\xc3\x89T\xc3\x89", "tHe"})});
  CHECK(none[0].shape() == Shape{1, 1});
  CHECK(texts(none[0]) == std::vector<std::string>{""});
}

TEST_CASE("RegexFullMatch uses RE2; a pattern RE2 rejects names the node", "[onnx][strings]") {
  OnnxModel m(20);
  m.input("x", TP::STRING, {3});
  attr_string(m.node("RegexFullMatch", {"x"}, {"y"}, "emails"), "pattern",
               R"([\w.]+@(gmail|yahoo)\.com)");
  m.output("y");
  const auto out = run(m, {strs({3}, {"a.b@gmail.com", "x@gmail.com.au", "@yahoo.com"})});
  CHECK(out[0].dtype() == DType::boolean);
  CHECK(out[0].to_int64_vector() == std::vector<int64_t>{1, 0, 0});

  OnnxModel bad(20);
  bad.input("x", TP::STRING, {1});
  attr_string(bad.node("RegexFullMatch", {"x"}, {"y"}, "broken"), "pattern", "(a|b");
  bad.output("y");
  Context ctx;
  check_error(bad.import(ctx).status(), StatusCode::kInvalidArgument,
              "RegexFullMatch 'broken': pattern '(a|b' is not a valid RE2 regular expression");
}

TEST_CASE("Equal compares strings element by element", "[onnx][strings]") {
  OnnxModel m(19);
  m.input("a", TP::STRING, {3});
  m.input("b", TP::STRING, {1});
  m.node("Equal", {"a", "b"}, {"y"});
  m.output("y");
  const auto out = run(m, {strs({3}, {"x", "xy", "x"}), strs({1}, {"x"})});
  CHECK(out[0].to_int64_vector() == std::vector<int64_t>{1, 0, 1});
}

TEST_CASE("LabelEncoder maps strings to integers and back, with defaults", "[onnx][strings]") {
  OnnxModel to_int(17);
  onnx::OperatorSetIdProto* ml = to_int.proto().add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(4);
  to_int.input("x", TP::STRING, {4});
  auto& n = to_int.node("LabelEncoder", {"x"}, {"y"});
  n.set_domain("ai.onnx.ml");
  attr_strings(n, "keys_strings", {"cat", "dog", "a,b"});
  attr_ints(n, "values_int64s", {0, 1, 2});
  attr_int(n, "default_int64", 42);
  to_int.output("y");
  const auto ids = run(to_int, {strs({4}, {"dog", "a,b", "cow", "cat"})});
  CHECK(ids[0].dtype() == DType::i64);
  CHECK(ids[0].to_int64_vector() == std::vector<int64_t>{1, 2, 42, 0});

  OnnxModel to_str(17);
  ml = to_str.proto().add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(4);
  to_str.input("x", TP::INT64, {3});
  auto& back = to_str.node("LabelEncoder", {"x"}, {"y"});
  back.set_domain("ai.onnx.ml");
  attr_tensor(back, "keys_tensor", Tensor::from_i64({2}, std::vector<int64_t>{7, 9}));
  attr_tensor(back, "values_tensor", strs({2}, {"seven", "nine"}));
  to_str.output("y");
  const auto names = run(to_str, {Tensor::from_i64({3}, std::vector<int64_t>{9, 8, 7})});
  CHECK(texts(names[0]) == std::vector<std::string>{"nine", "_Unused", "seven"});
}

TEST_CASE("an operator that does not take strings refuses them by node", "[onnx][strings]") {
  OnnxModel m(17);
  m.input("x", TP::STRING, {2});
  m.node("Transpose", {"x"}, {"y"}, "flip");
  m.output("y");
  Context ctx;
  check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
              "Transpose 'flip': input 0 is a string tensor (str[2]), which Transpose does not take");
}

// TopK's k computed in the graph (k = n + 1 from an input): the output's axis is sized at run time.
TEST_CASE("TopK with a k the graph computes", "[onnx][topk]") {
  OnnxModel m(11);
  m.input("x", TP::FLOAT, {2, 5});
  m.input("n", TP::INT64, {1});
  m.initializer("one", Tensor::from_i64({1}, std::vector<int64_t>{1}));
  m.node("Add", {"n", "one"}, {"k"});
  auto& n = m.node("TopK", {"x", "k"}, {"values", "indices"}, "top");
  attr_int(n, "largest", 0);
  m.output("values");
  m.output("indices");
  Context ctx;
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::f32, {2, kDynamicDim}});
  const Tensor x = Tensor::from_f32({2, 5}, std::vector<float>{3, 1, 2, 1, 5, 0, -1, 4, -1, 2});
  auto out = run_reference(*g, {x, Tensor::from_i64({1}, std::vector<int64_t>{2})});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == Shape{2, 3});
  CHECK(std::vector<float>((*out)[0].data<float>(), (*out)[0].data<float>() + 6) ==
        std::vector<float>{1, 1, 2, -1, -1, 0});
  CHECK((*out)[1].to_int64_vector() == std::vector<int64_t>{1, 3, 2, 1, 3, 0});
  // k larger than the axis is the error the compile-time path gives, naming the node.
  auto too_big = run_reference(*g, {x, Tensor::from_i64({1}, std::vector<int64_t>{5})});
  CHECK_THAT(std::string(too_big.status().message()),
             Catch::Contains("TopK 'top'") && Catch::Contains("k = 6 is outside [0, 5]"));
}

}  // namespace
}  // namespace collage::testing
