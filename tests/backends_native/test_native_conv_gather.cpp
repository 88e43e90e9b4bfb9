// Strided 1x1 convolutions (ResNet's downsample layers) whose data pack gathers the positions the
// windows read, and 7 x 7 outputs (ResNet's stage 4) in register tiles over rows and channel
// blocks: against the reference on both targets and channel blocks, and the pack's shape.
#include <catch2/catch.hpp>
#include <regex>

#include "backends/native/native_lower.h"
#include "common/graph_test_util.h"
#include "native_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// One group per line (node ids in parentheses), every value between them blocked:
//   A: r1 = Relu(Conv3x3 pads 1 (x))                 (0, 1)     24 -> 40 channels, 13 x 13
//   B: d = Conv1x1 stride 2 (r1)                     (2)        40 -> 72, 7 x 7
//   C: c3 = Conv1x1 stride 2 pads 1 (r1)             (3)        40 -> 72, 8 x 8, its border
//                                                               read from the padding only
//   D: r3 = Relu(Conv2x2 (c3) + d)                   (4, 5, 6)  72 -> 72, 7 x 7
//   E: y = Relu(Conv1x1 (r3))                        (7, 8)     72 -> 136, 7 x 7
Graph model(const Context& ctx) {
  GraphBuilder b(ctx, "gather");
  ValueId x = b.add_input("x", {DType::f32, {1, 24, 13, 13}});
  auto w = [&](const char* name, Shape shape, uint64_t seed) {
    return b.add_constant(name, random_f32(shape, seed, -0.3f, 0.3f));
  };
  ValueId c1 = add(b, "Conv", {x, w("w1", {40, 24, 3, 3}, 1), w("b1", {40}, 2)}, conv_attrs(1));
  ValueId r1 = add(b, "Relu", {c1});
  ValueId d = add(b, "Conv", {r1, w("w2", {72, 40, 1, 1}, 3)}, conv_attrs(0, 2));
  ValueId c3 = add(b, "Conv", {r1, w("w3", {72, 40, 1, 1}, 4), w("b3", {72}, 5)}, conv_attrs(1, 2));
  ValueId c3b = add(b, "Conv", {c3, w("w3b", {72, 72, 2, 2}, 6)}, conv_attrs(0));
  ValueId r3 = add(b, "Relu", {add(b, "Add", {c3b, d})});
  ValueId c4 = add(b, "Conv", {r3, w("w4", {136, 72, 1, 1}, 7), w("b4", {136}, 8)},
                   conv_attrs(0));
  b.add_output(add(b, "Relu", {c4}));
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

}  // namespace

TEST_CASE("conv gather: strided 1x1 convolutions and 7x7 tiles compute what the reference does",
          "[native][conv]") {
  Context ctx;
  Graph g = model(ctx);
  check_like_reference(ctx, g, native_groups(g, {{0, 1}, {2}, {3}, {4, 5, 6}, {7, 8}}),
                       random_f32({1, 24, 13, 13}, 42), 1e-5, {2});
}

TEST_CASE("conv gather: a strided 1x1 conv packs only the positions its windows read",
          "[native][conv]") {
  Context ctx;
  Graph g = model(ctx);
  const te_ops::TeOpRegistry ops = te_ops::default_te_ops();
  {
    // Blocks of 8 (the AVX2 target's): 40 channels are no whole number of 16-channel blocks.
    const int32_t block = 8;
    std::vector<Layout> layouts(g.values().size(), Layout::channel_blocked(block));
    auto group = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), {2}), layouts);
    INFO(group.status().ToString());
    REQUIRE(group.ok());
    auto lowered = native::lower_group(group->graph, ops, {codegen::TargetSpec::host(), 2}, "k");
    REQUIRE(lowered.ok());
    const std::string code = te::to_string(lowered->kernel);
    INFO(code);
    // Read in place, every output block would read the 13 x 13 input at stride 2; the pack holds
    // its 7 x 7 positions (all rows, or a parallel chunk's), a vector of channels at a time.
    CHECK(std::regex_search(code,
                            std::regex(R"(allocate Conv_2\.data_nchwc: f32\[1x5x[1-7]x7x8\])")));
    CHECK(enclosing_loop_vectorized(code, ".data_nchwc["));
  }
}
