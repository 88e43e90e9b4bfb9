// Pointwise convolutions over flattened positions (te_ops/conv.h: runs_flat): a 1x1 window at
// stride 1 reading a blocked input runs over its oh * ow positions as one axis, so that register
// tiles need not divide a row. Against the reference on both targets and channel blocks (tiles
// with a tail in positions, both parallel axes, a batch of 2, a residual Add fused into the
// store), and the loops of the lowered kernel.
#include <catch2/catch.hpp>

#include "backends/native/native_lower.h"
#include "common/graph_test_util.h"
#include "native_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// One group per line (node ids in parentheses), every value between them blocked; 7 x 9 = 63
// positions, a prime number of tiles for most widths:
//   A: r1 = Relu(Conv3x3 pads 1 (x))         (0, 1)     16 -> 48 channels
//   B: r2 = Relu(Conv1x1 (r1))               (2, 3)     48 -> 208: more weights than positions,
//                                                       parallel over channel tiles
//   C: r3 = Relu(Conv1x1 (r2) + r1)          (4, 5, 6)  208 -> 48, the residual fused
//   D: y = Conv1x1 (r3)                      (7)        48 -> 24, parallel over positions
Graph model(const Context& ctx) {
  GraphBuilder b(ctx, "flat");
  ValueId x = b.add_input("x", {DType::f32, {2, 16, 7, 9}});
  auto w = [&](const char* name, Shape shape, uint64_t seed) {
    return b.add_constant(name, random_f32(shape, seed, -0.3f, 0.3f));
  };
  ValueId c1 = add(b, "Conv", {x, w("w1", {48, 16, 3, 3}, 1), w("b1", {48}, 2)}, conv_attrs(1));
  ValueId r1 = add(b, "Relu", {c1});
  ValueId c2 = add(b, "Conv", {r1, w("w2", {208, 48, 1, 1}, 3), w("b2", {208}, 4)}, conv_attrs(0));
  ValueId r2 = add(b, "Relu", {c2});
  ValueId c3 = add(b, "Conv", {r2, w("w3", {48, 208, 1, 1}, 5)}, conv_attrs(0));
  ValueId r3 = add(b, "Relu", {add(b, "Add", {c3, r1})});
  b.add_output(add(b, "Conv", {r3, w("w4", {24, 48, 1, 1}, 6), w("b4", {24}, 7)}, conv_attrs(0)));
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

// The kernel of `nodes` of g with every value in blocks of `block`.
std::string kernel_code(const Context& ctx, const Graph& g, std::initializer_list<NodeId> nodes,
                        int32_t block) {
  const te_ops::TeOpRegistry ops = te_ops::default_te_ops();
  std::vector<Layout> layouts(g.values().size(), Layout::channel_blocked(block));
  auto group = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), nodes), layouts);
  INFO(group.status().ToString());
  REQUIRE(group.ok());
  auto lowered = native::lower_group(group->graph, ops, {codegen::TargetSpec::host(), 2}, "k");
  INFO(lowered.status().ToString());
  REQUIRE(lowered.ok());
  return te::to_string(lowered->kernel);
}

}  // namespace

TEST_CASE(
    "conv flat: pointwise convolutions over flattened positions compute what the "
    "reference does",
    "[native][conv]") {
  Context ctx;
  Graph g = model(ctx);
  check_like_reference(ctx, g, native_groups(g, {{0, 1}, {2, 3}, {4, 5, 6}, {7}}),
                       random_f32({2, 16, 7, 9}, 42), 1e-5);
}

TEST_CASE("conv flat: a pointwise conv reading blocks accumulates over positions, not rows",
          "[native][conv]") {
  Context ctx;
  Graph g = model(ctx);
  for (int32_t block : {8, 16}) {
    INFO("block " << block);
    // B reads r1 in blocks: its data pack is the input itself, one row of 63 positions.
    const std::string pointwise = kernel_code(ctx, g, {2, 3}, block);
    INFO(pointwise);
    CHECK(pointwise.find(".data_nchwc") == std::string::npos);
    // One loop over the fused positions; the input read at row p / 9, column p % 9.
    CHECK(pointwise.find(".fused") != std::string::npos);
    CHECK(pointwise.find("floormod(") != std::string::npos);
    // A (3x3, padded) keeps rows and columns: no fused position loop.
    const std::string window = kernel_code(ctx, g, {0, 1}, block);
    CHECK(window.find(".fused") == std::string::npos);
  }
}
