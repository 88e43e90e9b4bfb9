// MaxPool and AveragePool between native convolutions reading and writing channel blocks: windows
// strided, padded and hanging past the end (ceil_mode), the padding counted or not, both channel
// blocks and the AVX2 target, against the reference; and the lowered pool vectorized over a
// block's channels; a spatial Pad before an average pool (Inception-v3's) keeps the blocks.
// GlobalAveragePool of a
// squeeze-and-excitation block reading its input blocked, likewise.
#include <algorithm>
#include <catch2/catch.hpp>

#include "backends/native/native_lower.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/nn.h"
#include "collage/ops/pooling.h"
#include "collage/ops/tensor.h"
#include "collage/reference.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"
#include "native_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct Pool {
  int64_t k, s, pad, ceil;
  bool average = false;
  int64_t count_include_pad = 0;
};

template <typename Attrs>
std::shared_ptr<const OpAttrs> window(const Pool& p) {
  return make_attrs<Attrs>([&](Attrs& a) {
    a.kernel_shape = {p.k, p.k};
    a.strides = {p.s, p.s};
    a.pads = {p.pad, p.pad, p.pad, p.pad};
    a.ceil_mode = p.ceil;
    if constexpr (std::is_same_v<Attrs, AveragePoolAttrs>)
      a.count_include_pad = p.count_include_pad;
  });
}

// x [1, 32, 13, 13] -> Relu(Conv1x1) -> MaxPool or AveragePool -> Conv1x1 -> y: the pool's input
// and output blocked between the two convolutions (one group each).
Graph model(const Context& ctx, const Pool& p) {
  GraphBuilder b(ctx, "pool");
  ValueId x = b.add_input("x", {DType::f32, {1, 32, 13, 13}});
  const auto conv = conv_attrs(0);
  ValueId c1 = add(b, "Conv", {x, b.add_constant("w1", random_f32({32, 32, 1, 1}, 1, -0.3f, 0.3f))},
                   conv);
  ValueId r1 = add(b, "Relu", {c1});
  ValueId m = p.average ? add(b, "AveragePool", {r1}, window<AveragePoolAttrs>(p))
                        : add(b, "MaxPool", {r1}, window<MaxPoolAttrs>(p));
  b.add_output(add(b, "Conv", {m, b.add_constant("w2", random_f32({16, 32, 1, 1}, 2, -0.3f, 0.3f))},
                   conv));
  return finish(b);
}

// SqueezeNet's and GoogLeNet's max pools: 3x3 stride 2 with ceil_mode, 3x3 stride 1 padded, 2x2
// stride 2 with ceil_mode; Inception-v3's average pool (3x3 stride 1, the padding counted),
// DenseNet's (2x2 stride 2), and padded or ceil_mode windows counting only the taps inside.
constexpr Pool kPools[] = {{3, 2, 0, 1},          {3, 1, 1, 0},       {2, 2, 0, 1},
                           {3, 1, 1, 0, true, 1}, {2, 2, 0, 0, true}, {3, 1, 1, 0, true},
                           {3, 2, 1, 1, true}};

}  // namespace

TEST_CASE("blocked max and average pool: computes what the reference does", "[native][layout]") {
  Context ctx;
  for (const Pool& pool : kPools) {
    INFO((pool.average ? "average" : "max")
         << " pool " << pool.k << "/" << pool.s << "/" << pool.pad << "/" << pool.ceil << "/"
         << pool.count_include_pad);
    Graph g = model(ctx, pool);
    check_like_reference(ctx, g, native_groups(g, {{0, 1}, {2}, {3}}),
                         random_f32({1, 32, 13, 13}, 42), 1e-6);
  }
}

TEST_CASE("blocked max and average pool: each tap is a vector of a block's channels",
          "[native][layout]") {
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
      CHECK(lowered->schedule == (pool.average ? "anchor AveragePool" : "anchor MaxPool"));
      // The innermost loop of the window's maximum (sum) runs over the channels, vectorized.
      // (a window that never leaves the input adds its taps unselected)
      const size_t max = pool.average ? std::min(code.find(" + select("), code.find(" + arg0["))
                                      : code.find("max(");
      REQUIRE(max != std::string::npos);
      const size_t loop = code.rfind("for (", max);
      REQUIRE(loop != std::string::npos);
      const size_t line = code.rfind('\n', loop) + 1;
      CHECK(code.substr(line, loop - line).find("vectorized") != std::string::npos);
    }
}

namespace {

// A squeeze-and-excitation block between two convolutions, x [1, C, S, S]:
//   r = Relu(Conv1x1(x))            (0, 1)
//   g = GlobalAveragePool(r)        (2)     reads r
//   e = Sigmoid(Conv1x1(g))         (3, 4)
//   m = Mul(r, e)                   (5)     reads r
//   y = Conv1x1(m)                  (6)
Graph squeeze_excite(const Context& ctx, int64_t c, int64_t size, ValueId* r) {
  GraphBuilder b(ctx, "se");
  ValueId x = b.add_input("x", {DType::f32, {1, c, size, size}});
  const auto conv = conv_attrs(0);
  auto w = [&](const char* name, Shape shape, uint64_t seed) {
    return b.add_constant(name, random_f32(shape, seed, -0.3f, 0.3f));
  };
  *r = add(b, "Relu", {add(b, "Conv", {x, w("w1", {c, c, 1, 1}, 1)}, conv)});
  ValueId g = add(b, "GlobalAveragePool", {*r});
  ValueId e =
      add(b, "Sigmoid", {add(b, "Conv", {g, w("w2", {c, c, 1, 1}, 2), w("b2", {c}, 3)}, conv)});
  ValueId m = add(b, "Mul", {*r, e});
  b.add_output(add(b, "Conv", {m, w("w3", {16, c, 1, 1}, 4)}, conv));
  return finish(b);
}

const std::vector<std::vector<NodeId>> kSeGroups = {{0, 1}, {2}, {3, 4}, {5}, {6}};

}  // namespace

TEST_CASE("blocked global average pool: computes what the reference does", "[native][layout]") {
  Context ctx;
  // 32 x 32 x 32 is large enough to split the blocks between two threads; 24 channels fill
  // blocks of 8 but not of 16 (that pool reads plain).
  for (auto [c, size] : {std::pair<int64_t, int64_t>{32, 32}, {48, 7}, {24, 9}}) {
    INFO("C " << c << ", " << size << "x" << size);
    ValueId r = kNoValue;
    Graph g = squeeze_excite(ctx, c, size, &r);
    check_like_reference(ctx, g, native_groups(g, kSeGroups), random_f32({1, c, size, size}, 42),
                         1e-5);
  }
}

TEST_CASE(
    "blocked global average pool: the pool takes the convolution's blocks, summed a vector "
    "at a time",
    "[native][layout]") {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(register_native_backend(backends).ok());
  const te_ops::TeOpRegistry ops = te_ops::default_te_ops();
  for (int32_t block : {16, 8}) {
    INFO("block " << block);
    ValueId r = kNoValue;
    Graph g = squeeze_excite(ctx, 32, 32, &r);
    // The convolution's output, read by the pool and the Mul, stays blocked.
    const std::vector<Layout> layouts =
        assign_layouts(ctx, backends, g, native_groups(g, kSeGroups), block);
    CHECK(layouts[r] == Layout::channel_blocked(block));
    ValueId ragged = kNoValue;
    Graph g24 = squeeze_excite(ctx, 24, 9, &ragged);
    const std::vector<Layout> layouts24 =
        assign_layouts(ctx, backends, g24, native_groups(g24, kSeGroups), block);
    CHECK(layouts24[ragged] == (block == 8 ? Layout::channel_blocked(8) : Layout()));

    auto group = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), {2}), layouts);
    REQUIRE(group.ok());
    auto lowered = native::lower_group(group->graph, ops, {codegen::TargetSpec::host(), 2}, "k");
    REQUIRE(lowered.ok());
    const std::string code = te::to_string(lowered->kernel);
    INFO(code);
    CHECK(lowered->schedule == "anchor GlobalAveragePool");
    // The innermost loop of the sum runs over a block's channels, vectorized.
    const size_t acc = code.find(" + arg0[");
    REQUIRE(acc != std::string::npos);
    const size_t loop = code.rfind("for (", acc);
    REQUIRE(loop != std::string::npos);
    const size_t line = code.rfind('\n', loop) + 1;
    CHECK(code.substr(line, loop - line).find("vectorized") != std::string::npos);
    CHECK(code.find("parallel") != std::string::npos);
  }
}

TEST_CASE("blocked pad: a spatial Pad before an average pool passes blocks", "[native][layout]") {
  Context ctx;
  // x [1, 32, 13, 13] -> r = Relu(Conv1x1) (0, 1) -> p = Pad 1 (2) -> AveragePool 3x3 (3) ->
  // Conv1x1 (4): Inception-v3's branch pool as exported.
  GraphBuilder b(ctx, "pad_pool");
  ValueId x = b.add_input("x", {DType::f32, {1, 32, 13, 13}});
  const auto conv = conv_attrs(0);
  ValueId r =
      add(b, "Relu",
          {add(b, "Conv", {x, b.add_constant("w1", random_f32({32, 32, 1, 1}, 1, -0.3f, 0.3f))},
               conv)});
  ValueId p = add(b, "Pad", {r},
                  make_attrs<PadAttrs>([](PadAttrs& a) { a.pads = {0, 0, 1, 1, 0, 0, 1, 1}; }));
  ValueId m = add(b, "AveragePool", {p}, window<AveragePoolAttrs>({3, 1, 0, 0, true}));
  b.add_output(
      add(b, "Conv", {m, b.add_constant("w2", random_f32({16, 32, 1, 1}, 2, -0.3f, 0.3f))}, conv));
  Graph g = finish(b);
  const Placement placed = native_groups(g, {{0, 1}, {2}, {3}, {4}});
  BackendRegistry backends;
  REQUIRE(register_native_backend(backends).ok());
  for (int32_t block : {16, 8}) {
    const std::vector<Layout> layouts = assign_layouts(ctx, backends, g, placed, block);
    CHECK(layouts[r] == Layout::channel_blocked(block));
    CHECK(layouts[p] == Layout::channel_blocked(block));
    CHECK(layouts[m] == Layout::channel_blocked(block));
  }
  check_like_reference(ctx, g, placed, random_f32({1, 32, 13, 13}, 42), 1e-6);
}
