// Winograd convolutions of the native backend: which groups have the form, that they lower with
// the Winograd schedule, that they compute what the reference does (odd sizes, padding 0/1/2,
// channels that are no multiple of 16, batch 2, bias and every epilogue, both tile sizes, the
// AVX2 target), placed models whose values stay blocked (16 or 8 channels) between Winograd
// convolutions, and the shape of the code of a group that reads and writes blocked values.
#include <catch2/catch.hpp>

#include "backends/native/native_lower.h"
#include "backends/native/native_winograd.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/reference.h"
#include "common/backend_check.h"
#include "common/test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

std::shared_ptr<ConvAttrs> conv_attrs(int64_t pad, int64_t stride = 1, int64_t dilation = 1,
                                      int64_t group = 1) {
  auto a = std::make_shared<ConvAttrs>();
  a->pads = {pad, pad, pad, pad};
  a->strides = {stride, stride};
  a->dilations = {dilation, dilation};
  a->group = group;
  return a;
}

enum class Epilogue { none, relu, bn_relu, residual_relu, clip, sigmoid };

const char* epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::none: return "none";
    case Epilogue::relu: return "relu";
    case Epilogue::bn_relu: return "scale+shift+relu";
    case Epilogue::residual_relu: return "residual+relu";
    case Epilogue::clip: return "clip";
    case Epilogue::sigmoid: return "sigmoid";
  }
  return "";
}

struct Shape3x3 {
  int64_t n, c, h, w, m, pad;
  bool bias;
};

// Conv3x3(x) with the epilogue, one group.
Graph conv_group(TestGraph& t, const Shape3x3& s, Epilogue e) {
  ValueId x = t.input({s.n, s.c, s.h, s.w});
  std::vector<ValueId> in = {x, t.constant({s.m, s.c, 3, 3}, -0.3f, 0.3f)};
  if (s.bias) in.push_back(t.constant({s.m}));
  ValueId y = t.op("Conv", in, conv_attrs(s.pad));
  const Shape& out = t.shape(y);
  switch (e) {
    case Epilogue::none: break;
    case Epilogue::relu: y = t.op("Relu", {y}); break;
    case Epilogue::bn_relu:
      y = t.op("Mul", {y, t.constant({1, s.m, 1, 1}, 0.5f, 1.5f)});
      y = t.op("Add", {y, t.constant({1, s.m, 1, 1})});
      y = t.op("Relu", {y});
      break;
    case Epilogue::residual_relu:
      y = t.op("Add", {y, t.input(out)});
      y = t.op("Relu", {y});
      break;
    case Epilogue::clip:
      y = t.op("Clip", {y}, make_attrs<ClipAttrs>([](ClipAttrs& a) {
                 a.min = -0.5f;
                 a.max = 0.5f;
               }));
      break;
    case Epilogue::sigmoid: y = t.op("Sigmoid", {y}); break;
  }
  return t.finish(y);
}

std::unique_ptr<Backend> native_with(NativeWinograd mode, int tile = 4) {
  NativeBackendOptions options;
  options.winograd = mode;
  options.winograd_tile = tile;
  return make_native_backend(std::move(options));
}

BuildOptions build_options(int threads, const std::string& target, int32_t block = -1) {
  BuildOptions b;
  b.num_threads = threads;
  b.target = target;
  b.channel_block = block;
  return b;
}

const Backend& winograd_backend(int tile) {
  static const std::unique_ptr<Backend> f4 = native_with(NativeWinograd::always, 4);
  static const std::unique_ptr<Backend> f2 = native_with(NativeWinograd::always, 2);
  return tile == 2 ? *f2 : *f4;
}

// The group lowers with the Winograd compute and its own schedule.
void check_lowers_winograd(const Graph& g, int tile, const codegen::TargetSpec& target) {
  REQUIRE(native::winograd_group(g));
  auto ops = native::winograd_ops(te_ops::default_te_ops(target), tile);
  auto lowered = native::lower_group(g, *ops, {target, 2}, "k");
  INFO(lowered.status().ToString());
  REQUIRE(lowered.ok());
  CHECK(lowered->schedule == "anchor Conv");
  CHECK(te::to_string(lowered->kernel).find("wino_gemm") != std::string::npos);
}

}  // namespace

TEST_CASE("winograd: which groups have a Winograd form", "[native][winograd]") {
  // Each graph refers to the operators of its TestGraph's context, which must outlive it.
  std::vector<std::unique_ptr<TestGraph>> graphs;
  auto group = [&](std::shared_ptr<ConvAttrs> a, Shape w, bool constant_weight = true) {
    TestGraph& t = *graphs.emplace_back(std::make_unique<TestGraph>());
    ValueId x = t.input({1, 8, 10, 10});
    ValueId wv = constant_weight ? t.constant(w) : t.input(w);
    return t.finish(t.op("Conv", {x, wv}, std::move(a)));
  };
  CHECK(native::winograd_group(group(conv_attrs(1), {16, 8, 3, 3})));
  CHECK(native::winograd_group(group(conv_attrs(0), {5, 8, 3, 3})));
  CHECK(!native::winograd_group(group(conv_attrs(1, 2), {16, 8, 3, 3})));     // stride 2
  CHECK(!native::winograd_group(group(conv_attrs(2, 1, 2), {16, 8, 3, 3})));  // dilation 2
  CHECK(!native::winograd_group(group(conv_attrs(1, 1, 1, 2), {16, 4, 3, 3})));  // groups
  CHECK(!native::winograd_group(group(conv_attrs(0), {16, 8, 1, 1})));        // 1 x 1
  CHECK(!native::winograd_group(group(conv_attrs(2), {16, 8, 5, 5})));        // 5 x 5
  CHECK(!native::winograd_group(group(conv_attrs(1), {16, 8, 3, 3}, false)));  // weight input
}

TEST_CASE("winograd: convolutions compute what the reference does", "[native][winograd]") {
  const std::vector<Shape3x3> shapes = {
      {1, 16, 8, 8, 16, 1, true},    // whole tiles
      {1, 3, 9, 11, 5, 1, false},    // odd sizes, few channels, a partial output block
      {2, 20, 7, 7, 24, 0, true},    // batch 2, channels no multiple of 16, no padding
      {1, 32, 13, 10, 40, 2, true},  // padding 2
      {1, 17, 5, 6, 33, 1, false},   // output smaller than two tiles
  };
  for (int tile : {4, 2})
    for (const Shape3x3& s : shapes)
      for (Epilogue e : {Epilogue::none, Epilogue::relu, Epilogue::bn_relu,
                         Epilogue::residual_relu, Epilogue::clip, Epilogue::sigmoid}) {
        INFO("F(" << tile << "x" << tile << ") x [" << s.n << "," << s.c << "," << s.h << ","
                  << s.w << "] m " << s.m << " pad " << s.pad << " bias " << s.bias
                  << " epilogue " << epilogue_name(e));
        TestGraph t;
        Graph g = conv_group(t, s, e);
        check_lowers_winograd(g, tile, codegen::TargetSpec::host());
        GroupCheck check;
        check.elementwise = false;  // relative to the largest output
        // F(4x4)'s transforms scale by up to 8 and 5: a few 1e-6 of the conv's largest value,
        // more of a clipped output's (up to 2.7e-5 here).
        check.tolerance = tile == 4 ? 5e-5 : 1e-5;
        check.threads = {1, 3};
        check.inputs = t.feed(g);
        check_group(winograd_backend(tile), g, check);
      }
}

TEST_CASE("winograd: the AVX2 target's kernels compute what the reference does",
          "[native][winograd]") {
  if (!resolve_native_target("avx2").ok()) {
    WARN("this machine does not run AVX2 code");
    return;
  }
  TestGraph t;
  Graph g = conv_group(t, {1, 24, 11, 9, 40, 1, true}, Epilogue::residual_relu);
  auto target = codegen::TargetSpec::named("avx2");
  REQUIRE(target.ok());
  check_lowers_winograd(g, 4, *target);
  auto kernel = winograd_backend(4).build(g, build_options(2, "avx2"));
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  std::vector<Tensor> inputs = t.feed(g);
  auto expected = run_reference(g, inputs);
  REQUIRE(expected.ok());
  Tensor out((*expected)[0].dtype(), (*expected)[0].shape());
  std::vector<void*> args;
  for (Tensor& in : inputs) args.push_back(in.raw());
  args.push_back(out.raw());
  for (int32_t task = 0; task < (*kernel)->task_count(); ++task)
    REQUIRE((*kernel)->run_task(args.data(), task).ok());
  INFO(describe_mismatch(out, (*expected)[0]));
  CHECK(max_scaled_error(out, (*expected)[0]) <= 1e-5);
}

TEST_CASE("winograd: placed models keep blocked values between Winograd convolutions",
          "[native][winograd][layout]") {
  Context ctx;
  GraphBuilder b(ctx, "winograd_chain");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 14, 14}});
  auto w = [&](const char* name, Shape shape, uint64_t seed) {
    return b.add_constant(name, random_f32(shape, seed, -0.3f, 0.3f));
  };
  auto add = [&](const char* op, std::vector<ValueId> in, std::shared_ptr<const OpAttrs> a = nullptr) {
    auto v = b.add(op, std::move(in), std::move(a));
    REQUIRE(v.ok());
    return *v;
  };
  // r1 = Relu(Conv(x)); r2 = Relu(Conv(r1) + r1); y = Conv(r2): r1 and r2 pass blocked.
  ValueId r1 = add("Relu", {add("Conv", {x, w("w1", {32, 16, 3, 3}, 1), w("b1", {32}, 2)}, conv_attrs(1))});
  ValueId c2 = add("Conv", {r1, w("w2", {32, 32, 3, 3}, 3), w("b2", {32}, 4)}, conv_attrs(1));
  ValueId r2 = add("Relu", {add("Add", {c2, r1})});
  b.add_output(add("Conv", {r2, w("w3", {16, 32, 3, 3}, 5)}, conv_attrs(0)));
  auto g = b.finish();
  REQUIRE(g.ok());
  const size_t n = g->nodes().size();
  Placement p;
  for (std::vector<NodeId> nodes : {std::vector<NodeId>{0, 1}, {2, 3, 4}, {5}})
  {
    PlacedGroup group;
    group.nodes = NodeSet::of(n, nodes);
    group.backend = std::string(kNativeBackend);
    p.groups.push_back(std::move(group));
  }
  for (NativeWinograd mode : {NativeWinograd::always, NativeWinograd::measure}) {
    BackendRegistry backends;
    REQUIRE(backends.add(make_reference_backend()).ok());
    REQUIRE(backends.add(native_with(mode)).ok());
    const std::vector<Layout> layouts = assign_layouts(ctx, backends, *g, p, 16);
    CHECK(layouts[r1] == Layout::channel_blocked(16));
    CHECK(layouts[r2] == Layout::channel_blocked(16));
    Tensor input = random_f32({1, 16, 14, 14}, 42);
    auto expected = run_reference(*g, {input});
    REQUIRE(expected.ok());
    for (const char* target : {"", "avx2"}) {
      if (!resolve_native_target(target).ok()) continue;
      for (int32_t block : {16, 8, 0}) {
        INFO("mode " << static_cast<int>(mode) << " target '" << target << "' block " << block);
        auto model = compile_placement(ctx, backends, *g, p, build_options(2, target, block));
        INFO(model.status().ToString());
        REQUIRE(model.ok());
        auto out = model->run({input});
        REQUIRE(out.ok());
        INFO(describe_mismatch((*out)[0], (*expected)[0]));
        CHECK(max_scaled_error((*out)[0], (*expected)[0]) <= 1e-5);
      }
    }
  }
}

TEST_CASE("winograd: a group between blocked values computes in their block, its pack a vector "
          "of channels at a time",
          "[native][winograd][layout]") {
  TestGraph t;
  // Padding 1: the pack copies each chunk's windows (no copy to skip).
  Graph g = conv_group(t, {1, 32, 14, 14, 48, 1, true}, Epilogue::relu);
  for (int32_t block : {16, 8}) {
    std::vector<Layout> layouts(g.values().size(), Layout::channel_blocked(block));
    auto group = extract_subgraph(t.context(), g, NodeSet::of(g.nodes().size(), {0, 1}), layouts);
    REQUIRE(group.ok());
    auto ops = native::winograd_ops(te_ops::default_te_ops(), 4);
    auto lowered = native::lower_group(group->graph, *ops, {codegen::TargetSpec::host(), 2}, "k");
    INFO("block " << block << ": " << lowered.status().ToString());
    REQUIRE(lowered.ok());
    const std::string code = te::to_string(lowered->kernel);
    INFO(code);
    REQUIRE(code.find("wino_gemm") != std::string::npos);
    // The transformed weight, packed at build time: [6][6][M/b][C/b][b][b].
    bool weight = false;
    for (const native::ConstantArg& c : lowered->constants)
      if (c.pack >= 0 && c.type.shape.size() == 6) {
        weight = true;
        CHECK(c.type.shape == Shape{6, 6, 48 / block, 32 / block, block, block});
      }
    CHECK(weight);
    // The loop that stores the pack's first element is vectorized.
    CHECK(enclosing_loop_vectorized(code, ".data_nchwc["));
  }
}
