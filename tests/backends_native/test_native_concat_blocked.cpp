// Concat along the channels of values in channel blocks (GoogLeNet's and SqueezeNet's branch
// outputs), between native convolutions and a max pool: against the reference on both channel
// blocks and targets, and the lowered concatenation copying whole blocks.
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

// x [1, 16, 13, 13] -> Relu(Conv1x1 -> 16), Conv1x1 -> 32, Conv3x3 -> 8 (pads 1) -> Concat (56
// channels: whole blocks of 8, not of 16) -> MaxPool 3x3 stride 1 pads 1 -> Conv1x1 -> y.
Graph model(const Context& ctx) {
  GraphBuilder b(ctx, "concat");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 13, 13}});
  auto conv = [&](ValueId in, const char* name, int64_t m, int64_t c, int64_t k, uint64_t seed) {
    return add(b, "Conv", {in, b.add_constant(name, random_f32({m, c, k, k}, seed, -0.3f, 0.3f))},
               conv_attrs(k / 2));
  };
  ValueId a = add(b, "Relu", {conv(x, "wa", 16, 16, 1, 1)});
  ValueId c = conv(x, "wb", 32, 16, 1, 2);
  ValueId d = conv(x, "wc", 8, 16, 3, 3);
  ValueId cat = add(b, "Concat", {a, c, d}, make_attrs<ConcatAttrs>([](ConcatAttrs& at) {
                      at.axis = 1;
                    }));
  ValueId m = add(b, "MaxPool", {cat}, make_attrs<MaxPoolAttrs>([](MaxPoolAttrs& at) {
                    at.kernel_shape = {3, 3};
                    at.strides = {1, 1};
                    at.pads = {1, 1, 1, 1};
                  }));
  b.add_output(conv(m, "wd", 16, 56, 1, 4));
  return finish(b);
}

}  // namespace

TEST_CASE("blocked concat: computes what the reference does", "[native][layout]") {
  Context ctx;
  Graph g = model(ctx);
  check_like_reference(ctx, g, native_groups(g, {{0, 1}, {2}, {3}, {4}, {5}, {6}}),
                       random_f32({1, 16, 13, 13}, 42), 1e-5);
}

TEST_CASE("blocked concat: chooses the part per block, copies a block as one vector",
          "[native][layout]") {
  Context ctx;
  Graph g = model(ctx);
  const te_ops::TeOpRegistry ops = te_ops::default_te_ops();
  std::vector<Layout> layouts(g.values().size(), Layout::channel_blocked(8));
  auto group = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), {4}), layouts);
  REQUIRE(group.ok());
  auto avx2 = codegen::TargetSpec::named("x86-64-v3");
  REQUIRE(avx2.ok());
  auto lowered = native::lower_group(group->graph, ops, {*avx2, 2}, "k");
  REQUIRE(lowered.ok());
  const std::string code = te::to_string(lowered->kernel);
  INFO(code);
  // One AVX2 vector is one block: the vectorized loop's variable indexes the channels within the
  // block directly, and the select between the parts does not depend on it.
  const size_t loop = code.find("vectorized for (");
  REQUIRE(loop != std::string::npos);
  const size_t name_end = code.find(',', loop);
  const std::string var = code.substr(loop + 16, name_end - loop - 16);
  INFO("vector variable " << var);
  CHECK(code.find("floordiv(" + var) == std::string::npos);
  CHECK(code.find("floormod(" + var) == std::string::npos);
  CHECK(code.find("select(" + var) == std::string::npos);
  CHECK(code.find("if (") == std::string::npos);
}

namespace {

// DenseNet's layer input: x [2, 8, 9, 11] -> Relu(Conv3x3 -> 8) (pads 1), Conv1x1 -> 32 ->
// Concat (40 channels) -> BatchNormalization -> Relu -> Conv1x1 -> 24 = y.
Graph normalized_model(const Context& ctx) {
  GraphBuilder b(ctx, "concat_bn");
  ValueId x = b.add_input("x", {DType::f32, {2, 8, 9, 11}});
  auto constant = [&](const char* name, Shape shape, uint64_t seed, float lo, float hi) {
    return b.add_constant(name, random_f32(shape, seed, lo, hi));
  };
  ValueId a =
      add(b, "Relu",
          {add(b, "Conv", {x, constant("wa", {8, 8, 3, 3}, 1, -0.3f, 0.3f)}, conv_attrs(1))});
  ValueId c = add(b, "Conv", {x, constant("wb", {32, 8, 1, 1}, 2, -0.3f, 0.3f)}, conv_attrs(0));
  ValueId cat =
      add(b, "Concat", {a, c}, make_attrs<ConcatAttrs>([](ConcatAttrs& at) { at.axis = 1; }));
  ValueId bn = add(b, "BatchNormalization",
                   {cat, constant("scale", {40}, 3, 0.5f, 1.5f), constant("bias", {40}, 4, -1, 1),
                    constant("mean", {40}, 5, -0.5f, 0.5f), constant("var", {40}, 6, 0.5f, 2)});
  ValueId r = add(b, "Relu", {bn});
  b.add_output(add(b, "Conv", {r, constant("wd", {24, 40, 1, 1}, 7, -0.3f, 0.3f)}, conv_attrs(0)));
  return finish(b);
}

}  // namespace

TEST_CASE(
    "blocked concat: a Concat with a BatchNormalization and Relu after it takes and writes "
    "blocks",
    "[native][layout]") {
  Context ctx;
  Graph g = normalized_model(ctx);
  // Nodes: 0 Conv, 1 Relu, 2 Conv, 3 Concat, 4 BatchNormalization, 5 Relu, 6 Conv.
  check_like_reference(ctx, g, native_groups(g, {{0, 1}, {2}, {3, 4, 5}, {6}}),
                       random_f32({2, 8, 9, 11}, 42), 1e-5);
  auto backend = make_native_backend();
  auto s = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), {3, 4, 5}));
  REQUIRE(s.ok());
  const Graph& group = s->graph;
  const Layout blocked = Layout::channel_blocked(8);
  CHECK(backend->accepts_layout(group, group.outputs()[0], blocked));
  int data_inputs = 0;
  for (ValueId in : group.inputs()) {
    const bool data = group.value(in).type.shape.size() == 4;
    data_inputs += data;
    // The Concat's inputs take blocks; the per-channel parameters stay plain.
    CHECK(backend->accepts_layout(group, in, blocked) == data);
  }
  CHECK(data_inputs == 2);
  // 8 and 40 channels are no whole number of 16-channel blocks.
  CHECK(!backend->accepts_layout(group, group.outputs()[0], Layout::channel_blocked(16)));
}
