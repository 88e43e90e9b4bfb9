// MaxPool between native convolutions reading and writing channel blocks: windows strided,
// padded and hanging past the end (ceil_mode), both channel blocks and the AVX2 target, against
// the reference; and the lowered pool vectorized over a block's channels.
#include <catch2/catch.hpp>

#include "backends/native/native_lower.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/nn.h"
#include "collage/ops/pooling.h"
#include "collage/reference.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"
#include "native_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct Pool {
  int64_t k, s, pad, ceil;
};

// x [1, 32, 13, 13] -> Relu(Conv1x1) -> MaxPool -> Conv1x1 -> y: the pool's input and output
// blocked between the two convolutions (one group each).
Graph model(const Context& ctx, const Pool& p) {
  GraphBuilder b(ctx, "pool");
  ValueId x = b.add_input("x", {DType::f32, {1, 32, 13, 13}});
  const auto conv = conv_attrs(0);
  ValueId c1 = add(b, "Conv", {x, b.add_constant("w1", random_f32({32, 32, 1, 1}, 1, -0.3f, 0.3f))},
                   conv);
  ValueId r1 = add(b, "Relu", {c1});
  ValueId m = add(b, "MaxPool", {r1}, make_attrs<MaxPoolAttrs>([&](MaxPoolAttrs& a) {
                    a.kernel_shape = {p.k, p.k};
                    a.strides = {p.s, p.s};
                    a.pads = {p.pad, p.pad, p.pad, p.pad};
                    a.ceil_mode = p.ceil;
                  }));
  b.add_output(add(b, "Conv", {m, b.add_constant("w2", random_f32({16, 32, 1, 1}, 2, -0.3f, 0.3f))},
                   conv));
  return finish(b);
}

// SqueezeNet's and GoogLeNet's pools: 3x3 stride 2 with ceil_mode, 3x3 stride 1 padded, 2x2
// stride 2 with ceil_mode.
constexpr Pool kPools[] = {{3, 2, 0, 1}, {3, 1, 1, 0}, {2, 2, 0, 1}};

}  // namespace

TEST_CASE("blocked max pool: computes what the reference does", "[native][layout]") {
  Context ctx;
  for (const Pool& pool : kPools) {
    INFO("pool " << pool.k << "/" << pool.s << "/" << pool.pad << "/" << pool.ceil);
    Graph g = model(ctx, pool);
    check_like_reference(ctx, g, native_groups(g, {{0, 1}, {2}, {3}}),
                         random_f32({1, 32, 13, 13}, 42), 1e-6);
  }
}

TEST_CASE("blocked max pool: each tap is a vector of a block's channels", "[native][layout]") {
  Context ctx;
  const te_ops::TeOpRegistry ops = te_ops::default_te_ops();
  for (const Pool& pool : kPools)
    for (int32_t block : {16, 8}) {
      Graph g = model(ctx, pool);
      std::vector<Layout> layouts(g.values().size(), Layout::channel_blocked(block));
      auto group = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), {2}), layouts);
      REQUIRE(group.ok());
      auto lowered = native::lower_group(group->graph, ops, {codegen::TargetSpec::host(), 2}, "k");
      REQUIRE(lowered.ok());
      const std::string code = te::to_string(lowered->kernel);
      INFO("block " << block << "\n" << code);
      CHECK(lowered->schedule == "anchor MaxPool");
      // The innermost loop of the window's maximum runs over the channels, vectorized.
      const size_t max = code.find("max(");
      REQUIRE(max != std::string::npos);
      const size_t loop = code.rfind("for (", max);
      REQUIRE(loop != std::string::npos);
      const size_t line = code.rfind('\n', loop) + 1;
      CHECK(code.substr(line, loop - line).find("vectorized") != std::string::npos);
    }
}
