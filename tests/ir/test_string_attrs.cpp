// String tensors in attributes and operator inference: hashes follow the text (stable across
// buffers), and an operator that does not take strings refuses them by node.
#include <catch2/catch.hpp>

#include "collage/context.h"
#include "collage/graph.h"
#include "collage/ops.h"

namespace collage {
namespace {

TEST_CASE("attribute hashes follow the text of string tensors", "[ir][strings]") {
  auto encoder = [](std::vector<std::string> keys) {
    LabelEncoderAttrs a;
    a.keys = Tensor::from_strings({static_cast<int64_t>(keys.size())}, keys);
    a.values = Tensor::from_i64({2}, std::vector<int64_t>{1, 2});
    a.default_value = Tensor::from_i64({1}, std::vector<int64_t>{-1});
    return a;
  };
  const LabelEncoderAttrs a = encoder({"cat", "dog"}), b = encoder({"cat", "dog"});
  const LabelEncoderAttrs c = encoder({"cat", "doe"});
  CHECK(a.hash() == b.hash());  // different buffers, same text
  CHECK(a.equals(b));
  CHECK(a.hash() != c.hash());
  CHECK_FALSE(a.equals(c));
}

TEST_CASE("only the string operators take and make strings", "[ir][strings]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  const ValueId x = b.add_input("x", {DType::str, {2}});
  auto relu = b.add("Relu", {x}, nullptr, "r");
  CHECK(relu.status().code() == absl::StatusCode::kUnimplemented);
  CHECK_THAT(std::string(relu.status().message()),
             Catch::Contains("Relu 'r': input 0 is a string tensor (str[2])"));
  auto cast = b.add("Cast", {b.add_input("n", {DType::i64, {2}})},
                    make_attrs<CastAttrs>([](auto& a) { a.to = "str"; }), "to_text");
  CHECK_THAT(std::string(cast.status().message()),
             Catch::Contains("Cast 'to_text': output 0 would be a string tensor"));
  auto joined = b.add("StringConcat", {x, x});
  REQUIRE(joined.ok());
  b.add_output(*joined);
  CHECK(b.finish().ok());
}

}  // namespace
}  // namespace collage
