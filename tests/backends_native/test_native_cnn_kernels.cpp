// The native backend's CNN kernels reading blocked values: strided and padded depthwise and dense
// convolutions, odd spatial sizes, both channel blocks and the AVX2 target, against the
// reference; and the shape of the code their data packs lower to.
#include <catch2/catch.hpp>

#include "backends/native/native_lower.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/reference.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"
#include "native_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// One group per line (node ids in parentheses), every value between them blocked:
//   A: r1 = Relu(Conv3x3 pads 1 (x))                    (0, 1)   16 -> 32 channels, 13 x 13
//   B: r2 = Clip(depthwise Conv3x3 stride 2 pads 1 (r1)) (2, 3)  7 x 7
//   C: r3 = Relu(Conv3x3 stride 2 pads 1 (r2))          (4, 5)   4 x 4
//   D: y = Conv1x1(r3) + depthwise Conv5x5 pads 2 (r3)  (6, 7, 8) the depthwise one in its own
//                                                                 group (7), graph output
Graph model(const Context& ctx) {
  GraphBuilder b(ctx, "cnn");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 13, 13}});
  auto w = [&](const char* name, Shape shape, uint64_t seed) {
    return b.add_constant(name, random_f32(shape, seed, -0.3f, 0.3f));
  };
  ValueId c1 = add(b, "Conv", {x, w("w1", {32, 16, 3, 3}, 1), w("b1", {32}, 2)}, conv_attrs(1, 1));
  ValueId r1 = add(b, "Relu", {c1});
  ValueId c2 = add(b, "Conv", {r1, w("w2", {32, 1, 3, 3}, 3), w("b2", {32}, 4)},
                   conv_attrs(1, 2, 32));
  ValueId r2 = add(b, "Clip", {c2}, make_attrs<ClipAttrs>([](ClipAttrs& a) {
                     a.min = 0.f;
                     a.max = 6.f;
                   }));
  ValueId c3 = add(b, "Conv", {r2, w("w3", {32, 32, 3, 3}, 5), w("b3", {32}, 6)}, conv_attrs(1, 2));
  ValueId r3 = add(b, "Relu", {c3});
  ValueId c4 = add(b, "Conv", {r3, w("w4", {32, 32, 1, 1}, 7)}, conv_attrs(0, 1));
  ValueId c5 = add(b, "Conv", {r3, w("w5", {32, 1, 5, 5}, 8)}, conv_attrs(2, 1, 32));
  b.add_output(add(b, "Add", {c4, c5}));
  return finish(b);
}

Placement placement(const Graph& g) {
  return native_groups(g, {{0, 1}, {2, 3}, {4, 5}, {7}, {6, 8}});
}

}  // namespace

TEST_CASE("cnn kernels: strided and padded convolutions of blocked values compute what the "
          "reference does",
          "[native][layout]") {
  Context ctx;
  Graph g = model(ctx);
  check_like_reference(ctx, g, placement(g), random_f32({1, 16, 13, 13}, 42), 1e-5, {2});
}

TEST_CASE("cnn kernels: a conv's data pack reads a blocked value a vector of channels at a time",
          "[native][layout]") {
  Context ctx;
  Graph g = model(ctx);
  const te_ops::TeOpRegistry ops = te_ops::default_te_ops();
  for (int32_t block : {16, 8}) {
    std::vector<Layout> layouts(g.values().size(), Layout::channel_blocked(block));
    auto lower = [&](std::vector<NodeId> nodes) {
      auto group = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), nodes), layouts);
      REQUIRE(group.ok());
      auto lowered = native::lower_group(group->graph, ops, {codegen::TargetSpec::host(), 2}, "k");
      REQUIRE(lowered.ok());
      CHECK(lowered->schedule == "anchor Conv");
      return te::to_string(lowered->kernel);
    };
    // The strided dense group and the stride-1 5x5 depthwise one: padded, so each chunk copies
    // the rows it reads; the loop that stores the copy's first element is vectorized.
    for (std::vector<NodeId> nodes : {std::vector<NodeId>{4, 5}, {7}}) {
      const std::string code = lower(nodes);
      INFO("block " << block << ", group of node " << nodes[0] << "\n" << code);
      CHECK(enclosing_loop_vectorized(code, ".data_nchwc["));
    }
    // The strided depthwise group reads its input in place: no copy.
    const std::string code = lower({2, 3});
    INFO("block " << block << "\n" << code);
    CHECK(code.find(".data_nchwc") == std::string::npos);
  }
}
