// Typed attributes: defaults, parsing from untyped maps, printing, hashing, equality.
#include <catch2/catch.hpp>

#include "collage/ops.h"

using namespace collage;

TEST_CASE("fill_attrs overwrites defaults and rejects bad values", "[attrs]") {
  ConvAttrs a;
  CHECK(a.group == 1);
  AttrMap m{{"group", int64_t{2}}, {"strides", std::vector<int64_t>{2, 2}}};
  REQUIRE(fill_attrs(a, m).ok());
  CHECK(a.group == 2);
  CHECK(a.strides == std::vector<int64_t>{2, 2});

  ConvAttrs b;
  auto wrong = fill_attrs(b, {{"group", std::string("x")}});
  CHECK(wrong.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(wrong.message()), Catch::Contains("'group'"));
  auto unknown = fill_attrs(b, {{"no_such_attr", int64_t{1}}});
  CHECK_THAT(std::string(unknown.message()), Catch::Contains("unknown attribute 'no_such_attr'"));
}

TEST_CASE("attribute hash and equality follow field values", "[attrs]") {
  ConvAttrs a, b;
  CHECK(a.equals(b));
  CHECK(a.hash() == b.hash());
  b.group = 3;
  CHECK_FALSE(a.equals(b));
  CHECK(a.hash() != b.hash());
  LeakyReluAttrs l;
  CHECK_FALSE(a.equals(l));
  CHECK_THAT(b.to_string(), Catch::Contains("group=3"));
}

TEST_CASE("ints are accepted for float attributes", "[attrs]") {
  LeakyReluAttrs l;
  REQUIRE(fill_attrs(l, {{"alpha", int64_t{2}}}).ok());
  CHECK(l.alpha == 2.0f);
}
