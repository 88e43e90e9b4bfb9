// The blocked convolution's register tile on widths with few divisors (SqueezeNet's 13, GoogLeNet's
// 7 and 14): the default tile's choice, and convolutions whose tiles leave a tail in columns and
// channel blocks computing what the reference does on both targets and channel blocks.
#include <catch2/catch.hpp>

#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/nn.h"
#include "collage/reference.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"
#include "native_test_util.h"
#include "te_ops/conv.h"
#include "te_ops/conv_tile.h"

using namespace collage;
using namespace collage::testing;
using te_ops::conv::default_register_tile;
using te_ops::conv::flat_register_tile;
using te_ops::conv::RegisterTile;
using te_ops::conv::tile_cycles;

TEST_CASE("conv tiles: a width with few divisors takes a tile with a tail where it is faster",
          "[native][conv]") {
  // AVX2 (12 accumulators of one vector): SqueezeNet's classifier, 13 columns x 125 blocks of 8
  // channels, has only 1 x 1 as a tile that divides both: one accumulator, every step waiting on
  // the last. A tile with tails fills the registers.
  const RegisterTile t = default_register_tile(13, 125, 1, 12, 28, 4, 8, true);
  CHECK(t.ow_t * t.oc_t >= 8);
  CHECK(t.ow_t * t.oc_t <= 12);
  CHECK(tile_cycles(13, 125, 1, t, 8) * 5 < tile_cycles(13, 125, 1, RegisterTile{1, 1}, 8));
  // Where the divisors give a full tile, it stays (AVX-512, 24 accumulators: 13 x 1 for 63 blocks;
  // AVX2, 14 columns x 24 blocks: 2 x 4 issues as many FMAs as 4 x 3 without a tail).
  const RegisterTile a = default_register_tile(13, 63, 1, 24, 28, 4, 16, true);
  CHECK((a.ow_t == 13 && a.oc_t == 1));
  const RegisterTile b = default_register_tile(14, 24, 1, 12, 28, 4, 8, true);
  CHECK((b.ow_t == 2 && b.oc_t == 4));
  // Blocks of two vectors (16 channels on AVX2) count twice against the budget.
  const RegisterTile c = default_register_tile(13, 10, 2, 12, 28, 4, 8, true);
  CHECK(c.ow_t * c.oc_t * 2 <= 12);
}

TEST_CASE("conv tiles: a grouped convolution's register tile stays within one group",
          "[native][conv]") {
  // ResNeXt-50's grouped stages on AVX2 (blocks of 8): 8, 16 and 32 channels a group share their
  // input over 1, 2 and 4 output blocks; 4 channels a group (block-diagonal) over one.
  te_ops::conv::Geometry g;
  g.block = 8;
  g.group = 32;
  for (auto [channels, shared] : {std::pair{256, 1}, {512, 2}, {1024, 4}, {128, 1}}) {
    g.c = g.m = channels;
    CHECK(g.shared_blocks() == shared);
  }
  g.group = 1;
  g.m = 200;
  CHECK(g.shared_blocks() == 25);
  // 7 columns (the last stage), 4 blocks a group: with a channel tail allowed, the estimate takes
  // 3 blocks; a grouped conv's tile divides the group's 4.
  for (int64_t shared : {1, 2, 4}) {
    const RegisterTile t = default_register_tile(7, shared, 1, 12, 28, 4, 8, false);
    INFO(shared << " blocks a group: " << t.ow_t << " x " << t.oc_t);
    CHECK(shared % t.oc_t == 0);
    CHECK(t.ow_t * t.oc_t >= 6);
  }
}

TEST_CASE(
    "conv tiles: a pointwise conv over flattened positions fills the registers with "
    "channel blocks that divide its channels",
    "[native][conv]") {
  // AVX2, 12 accumulators: ResNet's 2048 > 512 at 7 x 7 (49 positions, 64 blocks of 8) and
  // MobileNetV2's 960 > 160 (20 blocks). Any width of positions: 12 accumulators, not 7 x 1.
  for (int64_t mb : {64, 20}) {
    INFO(mb << " blocks");
    const RegisterTile t = flat_register_tile(49, mb, 1, 12, 6, 8);
    CHECK(t.ow_t * t.oc_t >= 10);
    CHECK(t.ow_t * t.oc_t <= 12);
    CHECK(mb % t.oc_t == 0);
    // At most one broadcast per cycle on AVX2: a tile of one channel block is broadcast-bound.
    CHECK(t.oc_t >= 2);
  }
  // 125 blocks (SqueezeNet's 1000 classes): 5 blocks divide them.
  CHECK(flat_register_tile(169, 125, 1, 12, 6, 8).oc_t == 5);
}

namespace {

// x [1, 24, 13, 13] -> Relu(Conv1x1 -> 200) -> Relu(Conv3x3 pads 1 -> 40) -> Conv1x1 -> 1000, one
// group each: 25, 5 and 125 blocks of 8 channels, 13, 7 and 63 of 16, on 13 columns.
Graph model(const Context& ctx) {
  GraphBuilder b(ctx, "tiles");
  ValueId x = b.add_input("x", {DType::f32, {1, 24, 13, 13}});
  auto w = [&](const char* name, Shape shape, uint64_t seed) {
    return b.add_constant(name, random_f32(shape, seed, -0.2f, 0.2f));
  };
  ValueId c1 = add(b, "Conv", {x, w("w1", {200, 24, 1, 1}, 1), w("b1", {200}, 2)}, conv_attrs(0));
  ValueId r1 = add(b, "Relu", {c1});
  ValueId c2 = add(b, "Conv", {r1, w("w2", {40, 200, 3, 3}, 3), w("b2", {40}, 4)}, conv_attrs(1));
  ValueId r2 = add(b, "Relu", {c2});
  b.add_output(add(b, "Conv", {r2, w("w3", {1000, 40, 1, 1}, 5), w("b3", {1000}, 6)},
                   conv_attrs(0)));
  return finish(b);
}

}  // namespace

TEST_CASE("conv tiles: convolutions whose register tiles leave tails compute what the reference "
          "does",
          "[native][conv]") {
  Context ctx;
  Graph g = model(ctx);
  check_like_reference(ctx, g, native_groups(g, {{0, 1}, {2, 3}, {4}}),
                       random_f32({1, 24, 13, 13}, 42), 1e-5);
}
