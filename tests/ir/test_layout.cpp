// Value layouts: the blocked order, the fit check, where the graph check allows a layout, and
// layouts in extracted groups, their signatures and their printed form.
#include <catch2/catch.hpp>
#include <cstring>

#include "collage/layout.h"
#include "collage/subgraph.h"
#include "common/test_util.h"

using namespace collage;

TEST_CASE("layout: channel-blocked order and the round trip", "[layout]") {
  Tensor plain = testing::random_f32({2, 32, 3, 5}, 1);
  const Layout b16 = Layout::channel_blocked(16);
  Tensor blocked = to_layout(plain, b16);
  const auto* p = static_cast<const float*>(plain.raw());
  const auto* q = static_cast<const float*>(blocked.raw());
  // Element (n, c, h, w) at ((n * 2 + c / 16) * 15 + h * 5 + w) * 16 + c % 16.
  for (int64_t n : {0, 1})
    for (int64_t c : {0, 7, 16, 31})
      for (int64_t hw : {0, 4, 14})
        CHECK(q[((n * 2 + c / 16) * 15 + hw) * 16 + c % 16] == p[(n * 32 + c) * 15 + hw]);
  Tensor back = from_layout(blocked, b16);
  CHECK(std::memcmp(back.raw(), plain.raw(), plain.bytes()) == 0);
  CHECK(layout_name(b16, 4) == "nChw16c");
  CHECK(layout_name(Layout::channel_blocked(8), 3) == "nCw8c");
  CHECK(layout_name(Layout(), 4) == "plain");
}

TEST_CASE("layout: the fit check says why a layout does not fit", "[layout]") {
  const Layout b16 = Layout::channel_blocked(16);
  CHECK(check_layout(b16, {DType::f32, {1, 32, 4, 4}}).ok());
  CHECK(check_layout(Layout(), {DType::f32, {7}}).ok());
  auto message = [](const absl::Status& s) { return std::string(s.message()); };
  CHECK_THAT(message(check_layout(b16, {DType::f32, {1, 24, 4, 4}})),
             Catch::Contains("24 channels") && Catch::Contains("multiple of the block 16"));
  CHECK_THAT(message(check_layout(b16, {DType::f32, {4, 32}})),
             Catch::Contains("no channel and spatial axes"));
  CHECK_THAT(message(check_layout(Layout::channel_blocked(65), {DType::f32, {1, 65, 2}})),
             Catch::Contains("not in 1..64"));
}

TEST_CASE("layout: only inputs and outputs have one; groups carry theirs", "[layout]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 4, 4}});
  ValueId r = *b.add("Relu", {x}, nullptr, "r");
  ValueId t = *b.add("Tanh", {r}, nullptr, "t");
  b.add_output(t);
  {
    GraphBuilder inner = b;
    inner.set_layout(r, Layout::channel_blocked(16));
    auto g = inner.finish();
    REQUIRE(!g.ok());
    CHECK_THAT(std::string(g.status().message()),
               Catch::Contains("'r'") && Catch::Contains("neither an input nor an output"));
  }
  {
    GraphBuilder odd = b;
    odd.set_layout(x, Layout::channel_blocked(5));
    auto g = odd.finish();
    REQUIRE(!g.ok());
    CHECK_THAT(std::string(g.status().message()), Catch::Contains("'x'"));
  }
  auto g = b.finish();
  REQUIRE(g.ok());
  // The Tanh cut out with its input blocked: a different signature, and the layout printed.
  std::vector<Layout> layouts(g->values().size());
  layouts[r] = Layout::channel_blocked(16);
  const NodeSet tanh = NodeSet::of(g->nodes().size(), {1});
  auto plain = extract_subgraph(ctx, *g, tanh);
  auto blocked = extract_subgraph(ctx, *g, tanh, layouts);
  REQUIRE(plain.ok());
  REQUIRE(blocked.ok());
  CHECK(blocked->graph.value(blocked->graph.inputs()[0]).layout == layouts[r]);
  CHECK(blocked->graph.value(blocked->graph.outputs()[0]).layout.plain());
  CHECK(canonical_signature(plain->graph) != canonical_signature(blocked->graph));
  CHECK_THAT(print_graph(blocked->graph), Catch::Contains("f32[1x16x4x4] nChw16c"));
  // A layout list of the wrong length is an error.
  auto wrong = extract_subgraph(ctx, *g, tanh, std::vector<Layout>(2));
  CHECK(!wrong.ok());
}
