// The DynamicQuantizeLinear split: which nodes split, into what, and the same bits either way.
#include <catch2/catch.hpp>

#include <cstring>

#include "collage/ops/dynamic_quantize_parts.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "passes/pass_test_util.h"
#include "passes/split_dynamic_quantize.h"

using namespace collage;
using namespace collage::testing;

namespace {

Graph dynamic_quantize(const Context& ctx, const Shape& shape, int outputs = 3) {
  GraphBuilder b(ctx);
  const ValueId x = b.add_input("x", {DType::f32, shape});
  auto outs = b.add_node("DynamicQuantizeLinear", {x}, nullptr, "dql", outputs);
  REQUIRE(outs.ok());
  for (ValueId v : *outs) b.add_output(v);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

// x with values from lo to hi, and exact halves of the scale that maps [lo, hi] to 255 steps.
Tensor values(const Shape& shape, float lo, float hi) {
  Tensor t(DType::f32, shape);
  const int64_t n = t.numel();
  const float step = (hi - lo) / 255.f;
  for (int64_t i = 0; i < n; ++i)
    t.data<float>()[i] = i % 3 == 0 ? lo + step * (static_cast<float>(i % 255) + 0.5f)
                                    : lo + (hi - lo) * static_cast<float>((i * 7919) % n) /
                                                static_cast<float>(n - 1);
  return t;
}

}  // namespace

TEST_CASE("split_dynamic_quantize: a ResNet activation becomes range, params, quantize",
          "[passes][quantize]") {
  Context ctx;
  const Graph g = dynamic_quantize(ctx, {1, 64, 56, 56});
  auto r = passes::split_dynamic_quantize(ctx, g);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  const Graph& split = **r;
  CHECK(op_names(split) ==
        std::vector<std::string>{"DynamicQuantizeRange", "DynamicQuantizeParams", "QuantizeLinear"});
  const auto& a = split.node(0).get<DynamicQuantizeRangeAttrs>();
  CHECK(a.axis == 2);    // 56 x 56 trailing values per row
  CHECK(a.chunks == 4);  // 4 x 3,136 partial results at most 16,384
  CHECK(split.value(split.outputs()[0]).name == g.value(g.outputs()[0]).name);
  CHECK(split.value(split.outputs()[2]).type.dtype == DType::u8);
  for (auto [lo, hi] : {std::pair{-2.f, 3.f}, std::pair{0.5f, 4.f}, std::pair{-4.f, -1.f}}) {
    INFO("x in [" << lo << ", " << hi << "]");
    const std::vector<Tensor> in = {values({1, 64, 56, 56}, lo, hi)};
    auto want = run_reference(g, in);
    auto got = run_reference(split, in);
    REQUIRE(want.ok());
    REQUIRE(got.ok());
    for (size_t o = 0; o < 3; ++o)
      CHECK(std::memcmp((*want)[o].raw(), (*got)[o].raw(), (*want)[o].bytes()) == 0);
  }
}

TEST_CASE("split_dynamic_quantize: y alone, and rows too long for one chunk's partials",
          "[passes][quantize]") {
  Context ctx;
  const Graph g = dynamic_quantize(ctx, {96, 2, 3000}, 1);
  auto r = passes::split_dynamic_quantize(ctx, g);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  const auto& a = (*r)->node(0).get<DynamicQuantizeRangeAttrs>();
  CHECK(a.axis == 2);    // 2 x 3000 is over 4,096 values: rows of 3,000
  CHECK(a.chunks == 2);  // the largest divisor of 2 within 16,384 partial results
  REQUIRE((*r)->outputs().size() == 1);
  const std::vector<Tensor> in = {values({96, 2, 3000}, -1.f, 7.f)};
  auto want = run_reference(g, in);
  auto got = run_reference(**r, in);
  REQUIRE(want.ok());
  REQUIRE(got.ok());
  CHECK(std::memcmp((*want)[0].raw(), (*got)[0].raw(), (*want)[0].bytes()) == 0);
}

TEST_CASE("split_dynamic_quantize: small, unsplittable and dynamic shapes stay one node",
          "[passes][quantize]") {
  Context ctx;
  std::vector<std::string> why;
  passes::RewriteOptions options;
  options.on_failure = [&](const auto&, const Node&, std::string_view w) { why.emplace_back(w); };
  for (const Shape& shape : {Shape{3, 7, 11}, Shape{65537}, Shape{1, 1, 70000}, Shape{40000, 2}}) {
    INFO(shape_to_string(shape));
    auto r = passes::split_dynamic_quantize(ctx, dynamic_quantize(ctx, shape), options);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());
  }
  REQUIRE(why.size() == 4);
  CHECK(why[0].find("fewer than 65536 values") != std::string::npos);
  for (size_t i = 1; i < 4; ++i) CHECK(why[i].find("do not split into chunks") != std::string::npos);
}
