// Blocked layouts at the dnnl backend's boundary: its convolution, pooling and elementwise groups
// take nChw16c and nChw8c values and pass them in place (one oneDNN primitive, no reorder);
// assign_layouts blocks the values between dnnl groups and across dnnl <-> native boundaries; and
// placed models compute what the reference does with every such path, both block sizes, in
// process and through an artifact.
#include <catch2/catch.hpp>
#include <numeric>

#include "artifact/artifact.h"
#include "backends/common/module_kernel.h"
#include "collage/backends/dnnl.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/nn.h"
#include "collage/reference.h"
#include "collage/runtime.h"
#include "collage/target.h"
#include "common/runtime_c_util.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"
#include "dnnl_module.h"

using namespace collage;
using namespace collage::testing;

namespace {

// The channel blocks oneDNN has JIT kernels for on this machine: 8 (AVX2) everywhere, 16 only
// with AVX-512 (without it oneDNN runs 16-channel blocked convolutions with its reference kernel,
// which is why the dnnl backend blocks by 8 on AVX2 targets).
std::vector<int32_t> jit_blocks() {
  if (codegen::TargetSpec::host().vector_bytes() >= 64) return {8, 16};
  return {8};
}

std::shared_ptr<ConvAttrs> conv_attrs(int64_t pad, int64_t group = 1) {
  auto a = std::make_shared<ConvAttrs>();
  a->pads = {pad, pad, pad, pad};
  a->group = group;
  return a;
}

struct Values {
  ValueId r1, r2, r3, p, e4, s;
};

// Groups (node ids in parentheses):
//   A: r1 = Relu(Conv3x3(x))                 (0, 1)     plain input, blocked output
//   B: r2 = Relu(depthwise Conv3x3(r1))      (2, 3)
//   C: r3 = Relu(Conv1x1(r2) + r1)           (4, 5, 6)  residual operand blocked
//   D: p = MaxPool2x2(r3)                    (7)
//   E: e4 = Relu(Conv3x3(p))                 (8, 9)
//   F: s = Sigmoid(e4)                       (10)
//   G: y = Conv1x1(s)                        (11)       graph output
Graph model(const Context& ctx, Values& v) {
  GraphBuilder b(ctx, "dnnl_layouts");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 12, 10}});
  auto w = [&](const char* name, Shape shape, uint64_t seed) {
    return b.add_constant(name, random_f32(shape, seed, -0.3f, 0.3f));
  };
  ValueId c1 = add(b, "Conv", {x, w("w1", {32, 16, 3, 3}, 1), w("b1", {32}, 2)}, conv_attrs(1));
  v.r1 = add(b, "Relu", {c1});
  ValueId c2 =
      add(b, "Conv", {v.r1, w("w2", {32, 1, 3, 3}, 3), w("b2", {32}, 4)}, conv_attrs(1, 32));
  v.r2 = add(b, "Relu", {c2});
  ValueId c3 = add(b, "Conv", {v.r2, w("w3", {32, 32, 1, 1}, 5)}, conv_attrs(0));
  v.r3 = add(b, "Relu", {add(b, "Add", {c3, v.r1})});
  auto pool = std::make_shared<MaxPoolAttrs>();
  pool->kernel_shape = {2, 2};
  pool->strides = {2, 2};
  v.p = add(b, "MaxPool", {v.r3}, pool);
  ValueId c4 = add(b, "Conv", {v.p, w("w4", {16, 32, 3, 3}, 6), w("b4", {16}, 7)}, conv_attrs(1));
  v.e4 = add(b, "Relu", {c4});
  v.s = add(b, "Sigmoid", {v.e4});
  b.add_output(add(b, "Conv", {v.s, w("w5", {16, 16, 1, 1}, 8)}, conv_attrs(0)));
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

const std::vector<std::vector<NodeId>> kGroups = {{0, 1}, {2, 3}, {4, 5, 6}, {7},
                                                  {8, 9}, {10},   {11}};

// Each group on the backend `backends` names for it ("d": dnnl, "n": native).
Placement placement(const Graph& g, std::string_view backends) {
  Placement p;
  for (size_t i = 0; i < kGroups.size(); ++i)
    p.groups.push_back(
        PlacedGroup{.nodes = NodeSet::of(g.nodes().size(), kGroups[i]),
                    .backend = std::string(backends[i] == 'd' ? kDnnlBackend : kNativeBackend)});
  return p;
}

BackendRegistry registry() {
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_dnnl_backend(backends).ok());
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

// The placements the tests run: all dnnl, and dnnl next to native both ways round.
const char* const kPlacements[] = {"ddddddd", "dndddnd", "ndnnndn"};

}  // namespace

TEST_CASE("dnnl layouts: the groups that take blocked values", "[dnnl][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  auto backend = make_dnnl_backend();
  auto group = [&](size_t i) {
    auto s = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), kGroups[i]));
    REQUIRE(s.ok());
    return std::move(*s);
  };
  for (int32_t block : {8, 16}) {
    INFO("block " << block);
    const Layout blocked = Layout::channel_blocked(block);
    for (size_t i : {0, 1, 2, 3, 4, 5, 6}) {
      INFO("group " << i);
      const ExtractedSubgraph s = group(i);
      // Every output and every input: their channels fill whole blocks of 8 and of 16.
      CHECK(backend->accepts_layout(s.graph, s.graph.outputs()[0], blocked));
      for (ValueId in : s.graph.inputs()) CHECK(backend->accepts_layout(s.graph, in, blocked));
    }
    // A block that does not divide the channels, and other blocks oneDNN has no kernels for.
    const ExtractedSubgraph a = group(0);
    CHECK(!backend->accepts_layout(a.graph, a.graph.outputs()[0], Layout::channel_blocked(32)));
    CHECK(!backend->accepts_layout(a.graph, a.graph.outputs()[0], Layout::channel_blocked(4)));
  }
  // A grouped conv whose groups hold 4 channels (no blocked kernel) and a conv of 3 input
  // channels (blocked output only).
  GraphBuilder b(ctx, "narrow");
  ValueId x = b.add_input("x", {DType::f32, {1, 32, 6, 6}});
  ValueId y =
      add(b, "Conv", {x, b.add_constant("w", random_f32({32, 4, 3, 3}, 1))}, conv_attrs(1, 8));
  ValueId x3 = b.add_input("x3", {DType::f32, {1, 3, 6, 6}});
  ValueId y3 =
      add(b, "Conv", {x3, b.add_constant("w3", random_f32({16, 3, 3, 3}, 2))}, conv_attrs(1));
  b.add_output(y);
  b.add_output(y3);
  auto narrow = b.finish();
  REQUIRE(narrow.ok());
  auto grouped = extract_subgraph(ctx, *narrow, NodeSet::of(2, {0}));
  auto rgb = extract_subgraph(ctx, *narrow, NodeSet::of(2, {1}));
  REQUIRE(grouped.ok());
  REQUIRE(rgb.ok());
  const Layout b16 = Layout::channel_blocked(16);
  CHECK(!backend->accepts_layout(grouped->graph, grouped->graph.inputs()[0], b16));
  CHECK(!backend->accepts_layout(grouped->graph, grouped->graph.outputs()[0], b16));
  CHECK(backend->accepts_layout(rgb->graph, rgb->graph.outputs()[0], b16));
}

TEST_CASE("dnnl layouts: values between dnnl groups and across dnnl <-> native are blocked",
          "[dnnl][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  BackendRegistry backends = registry();
  const Layout b16 = Layout::channel_blocked(16);
  const std::vector<Layout> dnnl = assign_layouts(ctx, backends, g, placement(g, "ddddddd"), 16);
  for (ValueId value : {v.r1, v.r2, v.r3, v.p, v.e4, v.s}) CHECK(dnnl[value] == b16);
  for (ValueId in : g.inputs()) CHECK(dnnl[in].plain());
  for (ValueId out : g.outputs()) CHECK(dnnl[out].plain());
  // The pooling on native, which takes blocks too (a MaxPool alone): blocked on both its sides;
  // with blocks of 4, which neither backend takes, plain.
  const std::vector<Layout> mixed = assign_layouts(ctx, backends, g, placement(g, "dddnddd"), 16);
  for (ValueId value : {v.r2, v.r3, v.p, v.e4}) CHECK(mixed[value] == b16);
  const std::vector<Layout> four = assign_layouts(ctx, backends, g, placement(g, "dddnddd"), 4);
  CHECK(four[v.r3].plain());
  CHECK(four[v.p].plain());
  const std::vector<Layout> crossed = assign_layouts(ctx, backends, g, placement(g, "dndddnd"), 16);
  for (ValueId value : {v.r1, v.r2, v.e4, v.s}) CHECK(crossed[value] == b16);
}

TEST_CASE("dnnl layouts: a blocked conv runs one oneDNN primitive in place", "[dnnl][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  auto backend = make_dnnl_backend();
  for (int32_t block : jit_blocks()) {
    std::vector<Layout> layouts(g.values().size());
    for (ValueId value : {v.r1, v.r2, v.r3}) layouts[value] = Layout::channel_blocked(block);
    // Depthwise (in and out blocked) and the 1x1 conv with its residual addend blocked.
    for (size_t i : {1, 2}) {
      INFO("block " << block << ", group " << i);
      auto s = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), kGroups[i]), layouts);
      REQUIRE(s.ok());
      auto kernel = backend->build(s->graph, {.num_threads = 2});
      INFO(kernel.status().ToString());
      REQUIRE(kernel.ok());
      KernelDesc desc((*kernel)->record(), s->graph);
      const rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
      INFO(probe.error);
      REQUIRE(probe.error.empty());
      CHECK(probe.packed.empty());  // weights reordered once, when the record was built
      // The depthwise conv alone; the 1x1 conv after copying the addend into dst (the sum).
      REQUIRE(probe.implementations.size() == (i == 1 ? 1u : 2u));
      INFO(probe.implementations.back());
      CHECK(probe.implementations.back().rfind("jit", 0) == 0);
    }
    // Blocked on one side only: the plain side is reordered, the conv still runs oneDNN's
    // blocked kernel (with `any` on the plain side it would pick its reference kernel).
    for (ValueId value : {v.r1, v.r2}) {
      std::vector<Layout> one(g.values().size());
      one[value] = Layout::channel_blocked(block);
      auto s = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), kGroups[1]), one);
      REQUIRE(s.ok());
      auto kernel = backend->build(s->graph, {.num_threads = 2});
      REQUIRE(kernel.ok());
      KernelDesc desc((*kernel)->record(), s->graph);
      const rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
      REQUIRE(probe.error.empty());
      CHECK(probe.implementations.size() == 2u);  // the conv and one reorder
      for (const std::string& impl : probe.implementations) {
        INFO("block " << block << ", input " << (value == v.r1 ? "blocked" : "plain") << ": "
                      << impl);
        CHECK(impl.rfind("ref", 0) != 0);
      }
    }
  }
}

TEST_CASE("dnnl layouts: no group of a blocked placement runs a reference kernel",
          "[dnnl][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  BackendRegistry backends = registry();
  auto backend = make_dnnl_backend();
  for (int32_t block : jit_blocks()) {
    const Placement p = placement(g, "ddddddd");
    const std::vector<Layout> layouts = assign_layouts(ctx, backends, g, p, block);
    for (size_t i = 0; i < p.groups.size(); ++i) {
      auto s = extract_subgraph(ctx, g, p.groups[i].nodes, layouts);
      REQUIRE(s.ok());
      auto kernel = backend->build(s->graph, {.num_threads = 2});
      REQUIRE(kernel.ok());
      KernelDesc desc((*kernel)->record(), s->graph);
      const rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
      REQUIRE(probe.error.empty());
      for (const std::string& impl : probe.implementations) {
        INFO("block " << block << ", group " << i << ": " << impl);
        CHECK(impl.rfind("ref", 0) != 0);
      }
    }
  }
}

TEST_CASE("dnnl layouts: placed models with blocked values compute what the reference does",
          "[dnnl][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  BackendRegistry backends = registry();
  Tensor x = random_f32({1, 16, 12, 10}, 42);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  for (const char* where : kPlacements)
    for (int32_t block : {16, 8, 0}) {
      INFO("placement " << where << ", channel block " << block);
      auto model = compile_placement(ctx, backends, g, placement(g, where),
                                     BuildOptions{.num_threads = 2, .channel_block = block});
      INFO(model.status().ToString());
      REQUIRE(model.ok());
      auto out = model->run({x});
      INFO(out.status().ToString());
      REQUIRE(out.ok());
      check_outputs(*out, *expected);
    }
}

TEST_CASE("dnnl layouts: an artifact with blocked dnnl values runs in the runtime",
          "[dnnl][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  BackendRegistry backends = registry();
  Tensor x = random_f32({1, 16, 12, 10}, 43);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  for (const char* where : {"ddddddd", "dndddnd"})
    for (int32_t block : {16, 8}) {
      INFO("placement " << where << ", channel block " << block);
      ArtifactOptions options;
      options.build.channel_block = block;
      auto bytes = compile_artifact(ctx, backends, g, placement(g, where), options);
      INFO(bytes.status().ToString());
      REQUIRE(bytes.ok());
      collage_module_t* m = nullptr;
      std::string err =
          take_message(collage_module_load_memory(bytes->data(), bytes->size(), nullptr, &m));
      INFO(err);
      REQUIRE(m);
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

TEST_CASE("dnnl layouts: the module still reads version 1 params (no channel blocks)",
          "[dnnl][layout]") {
  Context ctx;
  Values v;
  Graph g = model(ctx, v);
  auto s = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), kGroups[2]));
  REQUIRE(s.ok());
  auto kernel = make_dnnl_backend()->build(s->graph, {.num_threads = 2});
  REQUIRE(kernel.ok());
  KernelRecord record = (*kernel)->record();
  rt_dnnl::ParamReader r(record.params.data(), record.params.size());
  rt_dnnl::Header header;
  rt_dnnl::ConvParams params;
  header.io(r);
  params.io(r);
  REQUIRE(r.ok());
  REQUIRE(r.at_end());
  header.version = 1;
  rt_dnnl::ParamWriter w(1);
  header.io(w);
  params.io(w);
  // One u32 less per operand: src, dst, weights, bias and one per post-op.
  CHECK(w.bytes().size() + (4 + params.post_ops.size()) * sizeof(uint32_t) == record.params.size());
  record.params = w.bytes();
  KernelDesc desc(record, s->graph);
  const rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
  INFO(probe.error);
  CHECK(probe.error.empty());
}

TEST_CASE("dnnl layouts: a per-channel scale of a blocked value runs blocked", "[dnnl][layout]") {
  // y = Conv1x1(Conv1x1(x) * s), s of shape [1, 32, 1, 1] (a squeeze-and-excitation's scale).
  Context ctx;
  GraphBuilder b(ctx, "scaled");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 7, 9}});
  ValueId s = b.add_input("s", {DType::f32, {1, 32, 1, 1}});
  ValueId c1 = add(b, "Conv", {x, b.add_constant("w1", random_f32({32, 16, 1, 1}, 1))},
                   conv_attrs(0));     // 0
  ValueId m = add(b, "Mul", {c1, s});  // 1
  b.add_output(add(b, "Conv", {m, b.add_constant("w2", random_f32({16, 32, 1, 1}, 2))},
                   conv_attrs(0)));  // 2
  auto g = b.finish();
  REQUIRE(g.ok());
  BackendRegistry backends = registry();
  Placement p;
  for (NodeId n : {0, 1, 2})
    p.groups.push_back(
        PlacedGroup{.nodes = NodeSet::of(3, {n}), .backend = std::string(kDnnlBackend)});
  const std::vector<Tensor> in = {random_f32({1, 16, 7, 9}, 3), random_f32({1, 32, 1, 1}, 4)};
  auto expected = run_reference(*g, in);
  REQUIRE(expected.ok());
  for (int32_t block : {16, 8}) {
    INFO("block " << block);
    const std::vector<Layout> layouts = assign_layouts(ctx, backends, *g, p, block);
    CHECK(layouts[c1] == Layout::channel_blocked(block));
    CHECK(layouts[m] == Layout::channel_blocked(block));
    auto group = extract_subgraph(ctx, *g, NodeSet::of(3, {1}), layouts);
    REQUIRE(group.ok());
    auto kernel = make_dnnl_backend()->build(group->graph, {.num_threads = 2});
    REQUIRE(kernel.ok());
    KernelDesc desc((*kernel)->record(), group->graph);
    const rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
    REQUIRE(probe.error.empty());
    for (const std::string& impl : probe.implementations) {
      INFO(impl);
      CHECK(impl.rfind("ref", 0) != 0);
    }
    auto model = compile_placement(ctx, backends, *g, p,
                                   BuildOptions{.num_threads = 2, .channel_block = block});
    REQUIRE(model.ok());
    auto out = model->run(in);
    REQUIRE(out.ok());
    check_outputs(*out, *expected);
  }
}
