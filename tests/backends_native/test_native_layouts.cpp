// Blocked layouts between native groups: assign_layouts blocks the values that pass between
// convolution groups of the native backend and keeps plain the ones a pooling, a concatenation, a
// graph output or a group of another backend reads; placed models compute what the reference does
// with every layout path (conv, depthwise, residual add, pooling and concat at the boundary, a
// backend change), in process and through an artifact.
#include <catch2/catch.hpp>

#include "artifact/artifact.h"
#include "backends/native/native_lower.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/nn.h"
#include "collage/ops/tensor.h"
#include "collage/reference.h"
#include "collage/runtime.h"
#include "common/runtime_c_util.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"
#include "placement/cost_model.h"

using namespace collage;
using namespace collage::testing;

namespace {

std::shared_ptr<ConvAttrs> conv_attrs(int64_t pad, int64_t group = 1) {
  auto a = std::make_shared<ConvAttrs>();
  a->pads = {pad, pad, pad, pad};
  a->group = group;
  return a;
}

// The values the test checks the layouts of.
struct Values {
  ValueId r1, r2, r3, e4, c5;
};

// Groups (one per line, node ids in parentheses):
//   A: r1 = Relu(Conv3x3(x))                     (0, 1)
//   B: r2 = Relu(depthwise Conv3x3(r1))          (2, 3)
//   C: r3 = Relu(Conv1x1(r2) + r1)               (4, 5, 6)  residual add of a blocked input
//   D: p = MaxPool2x2(r3)                        (7)        graph output, reads r3 blocked
//   E: e4 = Relu(Conv3x3(r3))                    (8, 9)
//   F: c5 = Conv1x1(e4)                          (10)
//   G: cat = Concat(c5, e4)                      (11)       graph output, reads blocks
Graph model(const Context& ctx, Values& v) {
  GraphBuilder b(ctx, "layouts");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 12, 12}});
  auto w = [&](const char* name, Shape shape, uint64_t seed) {
    return b.add_constant(name, random_f32(shape, seed, -0.3f, 0.3f));
  };
  ValueId c1 = add(b, "Conv", {x, w("w1", {32, 16, 3, 3}, 1), w("b1", {32}, 2)}, conv_attrs(1));
  v.r1 = add(b, "Relu", {c1});
  ValueId c2 =
      add(b, "Conv", {v.r1, w("w2", {32, 1, 3, 3}, 3), w("b2", {32}, 4)}, conv_attrs(1, 32));
  v.r2 = add(b, "Relu", {c2});
  ValueId c3 = add(b, "Conv", {v.r2, w("w3", {32, 32, 1, 1}, 5)}, conv_attrs(0));
  ValueId a3 = add(b, "Add", {c3, v.r1});
  v.r3 = add(b, "Relu", {a3});
  auto pool = std::make_shared<MaxPoolAttrs>();
  pool->kernel_shape = {2, 2};
  pool->strides = {2, 2};
  b.add_output(add(b, "MaxPool", {v.r3}, pool));
  ValueId c4 = add(b, "Conv", {v.r3, w("w4", {16, 32, 3, 3}, 6), w("b4", {16}, 7)}, conv_attrs(1));
  v.e4 = add(b, "Relu", {c4});
  v.c5 = add(b, "Conv", {v.e4, w("w5", {16, 16, 1, 1}, 8)}, conv_attrs(0));
  auto cat = std::make_shared<ConcatAttrs>();
  cat->axis = 1;
  b.add_output(add(b, "Concat", {v.c5, v.e4}, cat));
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

// The placement above, with group B on `b_backend`.
Placement placement(const Graph& g, const std::string& b_backend) {
  const size_t n = g.nodes().size();
  const std::vector<std::vector<NodeId>> groups = {{0, 1}, {2, 3}, {4, 5, 6}, {7},
                                                   {8, 9}, {10},   {11}};
  Placement p;
  for (size_t i = 0; i < groups.size(); ++i)
    p.groups.push_back(PlacedGroup{.nodes = NodeSet::of(n, groups[i]),
                                   .backend = i == 1 ? b_backend : std::string(kNativeBackend)});
  return p;
}

BackendRegistry registry() {
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_native_backend(backends).ok());
  return backends;
}

void check_outputs(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t o = 0; o < actual.size(); ++o) {
    INFO("output " << o << ": " << describe_mismatch(actual[o], expected[o]));
    CHECK(max_scaled_error(actual[o], expected[o]) <= 1e-5);
  }
}

}  // namespace

TEST_CASE("layouts: values between native conv groups are blocked, boundaries stay plain",
          "[native][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  BackendRegistry backends = registry();
  const Layout blocked = Layout::channel_blocked(16);

  const std::vector<Layout> native =
      assign_layouts(ctx, backends, g, placement(g, std::string(kNativeBackend)), 16);
  REQUIRE(native.size() == g.values().size());
  CHECK(native[v.r1] == blocked);  // conv -> depthwise conv and residual add
  CHECK(native[v.r2] == blocked);  // depthwise conv -> 1x1 conv
  CHECK(native[v.r3] == blocked);  // read by the pooling and a conv
  CHECK(native[v.e4] == blocked);  // read by a conv and the concat (whole blocks)
  CHECK(native[v.c5] == blocked);  // read by the concat
  for (ValueId in : g.inputs()) CHECK(native[in].plain());
  for (ValueId out : g.outputs()) CHECK(native[out].plain());

  // Group B on the reference backend: the values it reads and writes stay plain.
  const std::vector<Layout> mixed =
      assign_layouts(ctx, backends, g, placement(g, std::string(kReferenceBackend)), 16);
  CHECK(mixed[v.r1].plain());
  CHECK(mixed[v.r2].plain());

  // Blocks of 8 (an AVX2 target's), as 16.
  const std::vector<Layout> small =
      assign_layouts(ctx, backends, g, placement(g, std::string(kNativeBackend)), 8);
  CHECK(small[v.r1] == Layout::channel_blocked(8));
  CHECK(small[v.r2] == Layout::channel_blocked(8));
  CHECK(small[v.r3] == Layout::channel_blocked(8));

  // A block the native convolutions do not use, and block 0: plain everywhere.
  for (int32_t block : {4, 0}) {
    const std::vector<Layout> other =
        assign_layouts(ctx, backends, g, placement(g, std::string(kNativeBackend)), block);
    for (const Layout& l : other) CHECK(l.plain());
  }
}

TEST_CASE("layouts: placed models with blocked values compute what the reference does",
          "[native][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  BackendRegistry backends = registry();
  Tensor x = random_f32({1, 16, 12, 12}, 42);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  for (const char* b_backend : {kNativeBackend.data(), kReferenceBackend.data()})
    for (int32_t block : {16, 8, 0}) {
      INFO("group B on " << b_backend << ", channel block " << block);
      auto model = compile_placement(ctx, backends, g, placement(g, b_backend),
                                     BuildOptions{.num_threads = 2, .channel_block = block});
      INFO(model.status().ToString());
      REQUIRE(model.ok());
      auto out = model->run({x});
      INFO(out.status().ToString());
      REQUIRE(out.ok());
      check_outputs(*out, *expected);
    }
  // The conv schedules' tiles for AVX2 write and read blocks too: 16 channels in two vectors, and
  // the target's own block of 8, one vector.
  for (int32_t block : {16, 8}) {
    INFO("AVX2, channel block " << block);
    auto avx2 =
        compile_placement(ctx, backends, g, placement(g, std::string(kNativeBackend)),
                          BuildOptions{.num_threads = 2, .target = "avx2", .channel_block = block});
    INFO(avx2.status().ToString());
    REQUIRE(avx2.ok());
    auto out = avx2->run({x});
    REQUIRE(out.ok());
    check_outputs(*out, *expected);
  }
  CHECK(native_channel_block("avx2") == 8);
  CHECK(native_channel_block("avx512") == 16);
}

TEST_CASE("layouts: a native group refuses a blocked value it cannot take", "[native][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  auto backend = make_native_backend();
  const Layout blocked = Layout::channel_blocked(16);
  auto group = [&](std::vector<NodeId> nodes) {
    auto s = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), nodes));
    REQUIRE(s.ok());
    return std::move(*s);
  };
  ExtractedSubgraph conv = group({2, 3}), pool = group({7}), cat = group({11});
  CHECK(backend->accepts_layout(conv.graph, conv.graph.inputs()[0], blocked));
  CHECK(backend->accepts_layout(conv.graph, conv.graph.outputs()[0], blocked));
  CHECK(backend->accepts_layout(conv.graph, conv.graph.inputs()[0], Layout::channel_blocked(8)));
  CHECK(!backend->accepts_layout(conv.graph, conv.graph.inputs()[0], Layout::channel_blocked(4)));
  // A MaxPool, and a Concat along channels of whole blocks, take the conv blocks only.
  CHECK(backend->accepts_layout(pool.graph, pool.graph.inputs()[0], blocked));
  CHECK(backend->accepts_layout(cat.graph, cat.graph.inputs()[0], blocked));
  CHECK(!backend->accepts_layout(pool.graph, pool.graph.inputs()[0], Layout::channel_blocked(4)));
  CHECK(!backend->accepts_layout(cat.graph, cat.graph.inputs()[0], Layout::channel_blocked(4)));
  // The reference backend takes plain values only, and says which one is not.
  auto reference = make_reference_backend();
  std::vector<Layout> layouts(g.values().size());
  layouts[v.r1] = blocked;
  auto cut = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), {2, 3}), layouts);
  REQUIRE(cut.ok());
  auto kernel = reference->build(cut->graph, {});
  REQUIRE(!kernel.ok());
  CHECK(kernel.status().message().find("nChw16c") != std::string_view::npos);
}

TEST_CASE("layouts: an artifact with blocked values runs in the runtime", "[native][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  BackendRegistry backends = registry();
  for (int32_t block : {16, 8}) {
    INFO("channel block " << block);
    ArtifactOptions options;
    options.build.channel_block = block;
    auto bytes =
        compile_artifact(ctx, backends, g, placement(g, std::string(kNativeBackend)), options);
    INFO(bytes.status().ToString());
    REQUIRE(bytes.ok());
    collage_module_t* m = nullptr;
    std::string err =
        take_message(collage_module_load_memory(bytes->data(), bytes->size(), nullptr, &m));
    INFO(err);
    REQUIRE(m);
    Tensor x = random_f32({1, 16, 12, 12}, 43);
    auto expected = run_reference(g, {x});
    REQUIRE(expected.ok());
    std::vector<Tensor> outputs;
    for (const Tensor& e : *expected) outputs.emplace_back(e.dtype(), e.shape());
    std::vector<DLTensor> in = {dl_view(x)}, out;
    for (const Tensor& t : outputs) out.push_back(dl_view(t));
    err = take_message(
        collage_module_run(m, in.data(), 1, out.data(), static_cast<int32_t>(out.size())));
    INFO(err);
    CHECK(err.empty());
    check_outputs(outputs, *expected);
    collage_module_release(m);
  }
}

TEST_CASE("layouts: conv groups with blocked values keep the conv schedules", "[native][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  const te_ops::TeOpRegistry ops = te_ops::default_te_ops();
  for (int32_t block : {16, 8}) {
    std::vector<Layout> layouts(g.values().size());
    layouts[v.r1] = layouts[v.r2] = Layout::channel_blocked(block);
    // Blocked output; blocked input and output (depthwise); blocked data and residual operand.
    for (std::vector<NodeId> nodes : {std::vector<NodeId>{0, 1}, {2, 3}, {4, 5, 6}}) {
      auto group = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), nodes), layouts);
      REQUIRE(group.ok());
      auto lowered = native::lower_group(group->graph, ops, {codegen::TargetSpec::host(), 2}, "k");
      INFO(print_graph(group->graph) << lowered.status().ToString());
      REQUIRE(lowered.ok());
      CHECK(lowered->schedule == "anchor Conv");
    }
  }
}

TEST_CASE("layouts: candidates are costed with the layouts their native neighbours give them",
          "[native][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  auto backend = make_native_backend();
  const Layout blocked = Layout::channel_blocked(16);
  std::map<NodeId, absl::StatusOr<ExtractedSubgraph>> chains;
  auto layouts = [&](std::vector<NodeId> nodes, int32_t block) {
    Candidate c{NodeSet::of(g.nodes().size(), nodes), backend.get(), "test"};
    auto plain = extract_subgraph(ctx, g, c.nodes);
    REQUIRE(plain.ok());
    return measured_layouts(ctx, g, c, *plain, block, chains);
  };
  // The depthwise group: its input comes from the chain Conv -> Relu, its output goes to a conv.
  std::vector<Layout> b = layouts({2, 3}, 16);
  REQUIRE(b.size() == g.values().size());
  CHECK(b[v.r1] == blocked);
  CHECK(b[v.r2] == blocked);
  // The group of the first conv: r1 is read by the depthwise conv and by the residual Add, whose
  // chain runs back to the 1x1 conv.
  std::vector<Layout> a = layouts({0, 1}, 16);
  REQUIRE(a.size() == g.values().size());
  CHECK(a[v.r1] == blocked);
  // The conv before the pooling and a conv: both take its output blocked.
  CHECK(layouts({4, 5, 6}, 16).size() == g.values().size());
  CHECK(layouts({4, 5, 6}, 16)[v.r3] == blocked);
  // The conv after it, read by a conv and the concat (whole blocks): blocked on both sides.
  std::vector<Layout> e = layouts({8, 9}, 16);
  REQUIRE(e.size() == g.values().size());
  CHECK(e[v.r3] == blocked);
  CHECK(e[v.e4] == blocked);
  CHECK(layouts({2, 3}, 0).empty());
}

TEST_CASE("layouts: an elementwise group between convolutions computes in blocks",
          "[native][layout]") {
  Context ctx;
  GraphBuilder b(ctx, "scaled");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 9, 7}});
  ValueId c1 = add(b, "Conv", {x, b.add_constant("w1", random_f32({32, 16, 3, 3}, 1, -0.3f, 0.3f))},
                   conv_attrs(1));                                                    // 0
  ValueId r = add(b, "Relu", {c1});                                                   // 1
  ValueId m = add(b, "Mul", {r, b.add_constant("s", random_f32({1, 32, 1, 1}, 2))});  // 2
  ValueId e = add(b, "Sigmoid", {m});                                                 // 3
  ValueId c2 = add(b, "Conv", {e, b.add_constant("w2", random_f32({16, 32, 1, 1}, 3, -0.3f, 0.3f))},
                   conv_attrs(0));  // 4
  b.add_output(c2);
  auto g = b.finish();
  REQUIRE(g.ok());
  BackendRegistry backends = registry();
  Placement p;
  for (std::vector<NodeId> nodes : {std::vector<NodeId>{0, 1}, {2, 3}, {4}})
    p.groups.push_back(PlacedGroup{.nodes = NodeSet::of(g->nodes().size(), nodes),
                                   .backend = std::string(kNativeBackend)});
  const std::vector<Layout> layouts = assign_layouts(ctx, backends, *g, p, 16);
  CHECK(layouts[r] == Layout::channel_blocked(16));
  CHECK(layouts[e] == Layout::channel_blocked(16));
  Tensor in = random_f32({1, 16, 9, 7}, 4);
  auto expected = run_reference(*g, {in});
  REQUIRE(expected.ok());
  auto model = compile_placement(ctx, backends, *g, p, BuildOptions{.num_threads = 2});
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  auto out = model->run({in});
  REQUIRE(out.ok());
  check_outputs(*out, *expected);
}
