// Artifacts with data-dependent shapes: NonZero and NonMaxSuppression and the nodes after them on
// the dynamic runtime module, next to static kernels on eigen, written (format version 2), loaded
// through the C API and run with
// collage_module_run_outputs; outputs equal to the reference executor's; collage_module_run
// refuses such a model; in process, the same kernels run through CompiledModel. Attributes
// given by run-time inputs (Reduce axes, Reshape shape, Slice starts, Pad's pads and value,
// Split's split) run there too; so do the windows, MelWeightMatrix, CenterCropPad, AffineGrid,
// Col2Im, Shape and Dropout given their sizes, shapes or ratio at run time.
#include <catch2/catch.hpp>

#include "collage/backends/dynamic.h"
#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/ops/geometry.h"
#include "collage/ops/signal.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "runtime/runtime_test_util.h"

namespace collage::testing {
namespace {

template <typename A, typename F>
std::shared_ptr<const OpAttrs> attrs(F&& f) {
  return make_attrs<A>(std::forward<F>(f));
}

// x f32[12] -> Relu -> NonZero -> Squeeze(0) -> Gather(table f32[12,3]) -> Mul(2) -> "rows";
// also the index list itself as "picked".
Graph nonzero_graph(const Context& ctx) {
  GraphBuilder b(ctx, "picks");
  const ValueId x = b.add_input("x", {DType::f32, {12}});
  const ValueId table = b.add_constant("table", random_f32({12, 3}, 5));
  const ValueId two = b.add_constant("two", Tensor::scalar_f32(2));
  const ValueId r = *b.add("Relu", {x});
  const ValueId nz = *b.add("NonZero", {r});
  const ValueId idx = *b.add("Squeeze", {nz}, attrs<SqueezeAttrs>([](auto& a) { a.axes = {0}; }));
  const ValueId rows = *b.add("Gather", {table, idx});
  const ValueId doubled = *b.add("Mul", {rows, two});
  b.set_value_name(doubled, "rows");
  b.set_value_name(idx, "picked");
  b.add_output(doubled);
  b.add_output(idx);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

BackendRegistry backends_with_dynamic() {
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  REQUIRE(register_dynamic_backend(backends).ok());
  return backends;
}

// Every node on `dynamic` when it touches a dynamic value, on eigen otherwise.
Placement split_placement(const Graph& g) {
  Placement p;
  p.strategy = "test";
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
    bool dynamic = false;
    for (ValueId v : g.node(n).outputs) dynamic = dynamic || g.value(v).type.is_dynamic();
    for (ValueId v : g.node(n).inputs)
      dynamic = dynamic || (v != kNoValue && g.value(v).type.is_dynamic());
    p.groups.push_back({NodeSet::of(g.nodes().size(), {n}), dynamic ? "dynamic" : "eigen"});
  }
  return p;
}

// `g` compiled into an artifact with split_placement over backends_with_dynamic(), loaded through
// the C API.
ModulePtr split_artifact(const Context& ctx, const Graph& g) {
  BackendRegistry backends = backends_with_dynamic();
  auto bytes = compile_artifact(ctx, backends, g, split_placement(g));
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  ModulePtr m = load_bytes(*bytes, nullptr, nullptr, nullptr);
  REQUIRE(m);
  return m;
}

// A 1-D i64 tensor holding `v`.
Tensor i64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_i64({n}, std::move(v));
}

TEST_CASE("an artifact runs NonZero and the nodes after it with run-time shapes",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  const Graph g = nonzero_graph(ctx);
  BackendRegistry backends = backends_with_dynamic();
  ArtifactSummary summary;
  auto bytes = compile_artifact(ctx, backends, g, split_placement(g), {}, &summary);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  CHECK(summary.format_version == 2);
  CHECK(std::find(summary.modules.begin(), summary.modules.end(), "dynamic") !=
        summary.modules.end());
  auto m = load_bytes(*bytes, nullptr, nullptr, nullptr);
  REQUIRE(m);
  collage_tensor_info_t info{};
  info.struct_size = sizeof info;
  REQUIRE(take_message(collage_module_output_info(m.get(), 0, &info)).empty());
  CHECK(info.shape[0] == -1);
  CHECK(info.bytes == 0);

  for (uint64_t seed : {1, 2, 3}) {
    const Tensor x = random_f32({12}, seed);
    std::string message;
    const std::vector<Tensor> got = run_outputs(m.get(), {x}, &message);
    INFO(message);
    REQUIRE(got.size() == 2);
    auto want = run_reference(g, {x});
    REQUIRE(want.ok());
    CHECK(got[0].shape() == (*want)[0].shape());
    CHECK(max_relative_error(got[0], (*want)[0]) == 0);
    CHECK(got[1].identical((*want)[1]));
  }
  // No element above zero: empty outputs.
  std::string message;
  const std::vector<Tensor> none = run_outputs(m.get(), {Tensor(DType::f32, {12})}, &message);
  REQUIRE(none.size() == 2);
  CHECK(none[0].shape() == Shape{0, 3});

  // collage_module_run cannot take outputs of unknown size.
  const Tensor x = random_f32({12}, 1);
  Tensor y(DType::f32, {4, 3}), idx(DType::i64, {4});
  DLTensor in = dl_view(x), out[2] = {dl_view(y), dl_view(idx)};
  message = take_message(collage_module_run(m.get(), &in, 1, out, 2));
  CHECK_THAT(message, Catch::Contains("collage_module_run_outputs") && Catch::Contains("rows"));
}

TEST_CASE("NonMaxSuppression's kept boxes come out of an artifact as the reference keeps them",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  GraphBuilder b(ctx, "nms");
  const ValueId boxes = b.add_input("boxes", {DType::f32, {1, 10, 4}});
  const ValueId scores = b.add_input("scores", {DType::f32, {1, 2, 10}});
  const ValueId max_out = b.add_constant("m", Tensor::from_i64({1}, std::vector<int64_t>{4}));
  const ValueId iou = b.add_constant("iou", Tensor::from_f32({1}, std::vector<float>{0.3f}));
  const ValueId sel = *b.add("NonMaxSuppression", {boxes, scores, max_out, iou});
  b.set_value_name(sel, "selected");
  b.add_output(sel);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto m = split_artifact(ctx, *g);
  Tensor box(DType::f32, {1, 10, 4});
  for (int64_t i = 0; i < 10; ++i) {
    const float y = static_cast<float>(i % 4), x = static_cast<float>(i / 4);
    const float v[4] = {y, x, y + 1.5f, x + 1.5f};
    std::memcpy(box.data<float>() + 4 * i, v, sizeof v);
  }
  const Tensor score = random_f32({1, 2, 10}, 7, 0.f, 1.f);
  std::string message;
  const std::vector<Tensor> got = run_outputs(m.get(), {box, score}, &message);
  INFO(message);
  REQUIRE(got.size() == 1);
  auto want = run_reference(*g, {box, score});
  REQUIRE(want.ok());
  CHECK(got[0].identical((*want)[0]));
}

// x f32[3x4], axes i64[1], shape i64[2], starts i64[1] -> ReduceMax(x, axes) -> Relu -> "max";
// Reshape(x, shape) -> "reshaped"; Slice(x, starts, ends 99, axes 1) -> "sliced".
Graph attr_input_graph(const Context& ctx) {
  GraphBuilder b(ctx, "attr_inputs");
  const ValueId x = b.add_input("x", {DType::f32, {3, 4}});
  const ValueId axes = b.add_input("axes", {DType::i64, {1}});
  const ValueId shape = b.add_input("shape", {DType::i64, {2}});
  const ValueId starts = b.add_input("starts", {DType::i64, {1}});
  const ValueId max = *b.add("ReduceMax", {x, axes},
                             attrs<ReduceAttrs>([](auto& a) { a.keepdims = 0; }));
  const ValueId relu = *b.add("Relu", {max});
  const ValueId reshaped = *b.add("Reshape", {x, shape});
  const ValueId sliced =
      *b.add("Slice", {x, starts, kNoValue, kNoValue, kNoValue}, attrs<SliceAttrs>([](auto& a) {
               a.ends = {99};
               a.axes = {1};
             }));
  b.set_value_name(relu, "max");
  b.set_value_name(reshaped, "reshaped");
  b.set_value_name(sliced, "sliced");
  b.add_output(relu);
  b.add_output(reshaped);
  b.add_output(sliced);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

TEST_CASE("an artifact reads Reduce axes, Reshape's shape and Slice's starts at run time",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  const Graph g = attr_input_graph(ctx);
  for (const Node& n : g.nodes()) CHECK(g.value(n.outputs[0]).type.is_dynamic());
  auto m = split_artifact(ctx, g);
  const Tensor x = random_f32({3, 4}, 11);
  struct Case {
    std::vector<int64_t> axes, shape, starts;
    Shape max, reshaped, sliced;
  };
  const Case cases[] = {{{1}, {2, 6}, {1}, {3}, {2, 6}, {3, 3}},
                        {{-2}, {-1, 3}, {-1}, {4}, {4, 3}, {3, 1}},
                        {{0}, {12, 1}, {0}, {4}, {12, 1}, {3, 4}}};
  for (const Case& c : cases) {
    const std::vector<Tensor> in = {x, i64s(c.axes), i64s(c.shape), i64s(c.starts)};
    std::string message;
    const std::vector<Tensor> got = run_outputs(m.get(), in, &message);
    INFO(message);
    REQUIRE(got.size() == 3);
    auto want = run_reference(g, in);
    INFO(want.status().ToString());
    REQUIRE(want.ok());
    CHECK(got[0].shape() == c.max);
    CHECK(got[1].shape() == c.reshaped);
    CHECK(got[2].shape() == c.sliced);
    for (size_t i = 0; i < 3; ++i) CHECK(max_relative_error(got[i], (*want)[i]) == 0);
  }
  // Values the node cannot take are an error of the run naming the operator, not a crash.
  std::string message;
  run_outputs(m.get(), {x, i64s({2}), i64s({2, 6}), i64s({0})}, &message);
  CHECK_THAT(message, Catch::Contains("ReduceMax") && Catch::Contains("out of range"));
  run_outputs(m.get(), {x, i64s({1}), i64s({5, 2}), i64s({0})}, &message);
  CHECK_THAT(message, Catch::Contains("Reshape") && Catch::Contains("cannot reshape"));
}

// x f32[3x4x5], pads i64[4], value f32[], split i64[3] -> Pad(x, pads, value; axes {0, 2}),
// Pad(x, pads; reflect, axes {2, 1}), Pad(x, pads; wrap, axes {2, 1}), Split(x, split; axis 1).
Graph pad_split_graph(const Context& ctx) {
  GraphBuilder b(ctx, "pad_split");
  const ValueId x = b.add_input("x", {DType::f32, {3, 4, 5}});
  const ValueId pads = b.add_input("pads", {DType::i64, {4}});
  const ValueId value = b.add_input("value", {DType::f32, {}});
  const ValueId split = b.add_input("split", {DType::i64, {3}});
  std::vector<ValueId> outs;
  outs.push_back(*b.add("Pad", {x, pads, value, kNoValue},
                        attrs<PadAttrs>([](auto& a) { a.axes = {0, 2}; })));
  for (const char* mode : {"reflect", "wrap"})
    outs.push_back(*b.add("Pad", {x, pads, kNoValue, kNoValue}, attrs<PadAttrs>([&](auto& a) {
                            a.axes = {2, 1};
                            a.mode = mode;
                          })));
  auto pieces = b.add_node("Split", {x, split}, attrs<SplitAttrs>([](auto& a) { a.axis = 1; }),
                           "split", 3);
  REQUIRE(pieces.ok());
  outs.insert(outs.end(), pieces->begin(), pieces->end());
  for (size_t i = 0; i < outs.size(); ++i) {
    b.set_value_name(outs[i], "out" + std::to_string(i));
    b.add_output(outs[i]);
  }
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

TEST_CASE("an artifact pads and splits by pads, axes, a value and split sizes given at run time",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  const Graph g = pad_split_graph(ctx);
  for (const Node& n : g.nodes()) CHECK(g.value(n.outputs[0]).type.is_dynamic());
  auto m = split_artifact(ctx, g);
  const Tensor x = random_f32({3, 4, 5}, 13);
  struct Case {
    std::vector<int64_t> pads, split;
    Shape constant, reflect, split0;
  };
  const Case cases[] = {{{1, 2, 0, 3}, {1, 1, 2}, {4, 4, 10}, {3, 9, 6}, {3, 1, 5}},
                        {{0, -1, 2, 0}, {0, 4, 0}, {5, 4, 4}, {3, 3, 7}, {3, 0, 5}},
                        {{3, 1, 1, 2}, {2, 2, 0}, {7, 4, 8}, {3, 7, 9}, {3, 2, 5}}};
  for (const Case& c : cases) {
    INFO("pads " << c.pads[0] << " " << c.pads[1] << " " << c.pads[2] << " " << c.pads[3]);
    const std::vector<Tensor> in = {x, i64s(c.pads), Tensor::scalar_f32(-2.5f), i64s(c.split)};
    std::string message;
    const std::vector<Tensor> got = run_outputs(m.get(), in, &message);
    INFO(message);
    REQUIRE(got.size() == 6);
    auto want = run_reference(g, in);
    INFO(want.status().ToString());
    REQUIRE(want.ok());
    CHECK(got[0].shape() == c.constant);
    CHECK(got[1].shape() == c.reflect);
    CHECK(got[3].shape() == c.split0);
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].identical((*want)[i]));
  }
  // Values the nodes cannot take are errors of the run naming the operator and the values.
  std::string message;
  run_outputs(m.get(), {x, i64s({0, -3, 0, -3}), Tensor::scalar_f32(0), i64s({1, 1, 2})},
              &message);
  CHECK_THAT(message, Catch::Contains("Pad") && Catch::Contains("crop 6 elements from axis 2"));
  run_outputs(m.get(), {x, i64s({0, 0, 0, 0}), Tensor::scalar_f32(0), i64s({1, 1, 3})}, &message);
  CHECK_THAT(message, Catch::Contains("Split") && Catch::Contains("sums to 5, but axis 1 has size 4"));
  auto bad = run_reference(g, {x, i64s({0, 0, 0, 0}), Tensor::scalar_f32(0), i64s({1, 1, 3})});
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("Split") && Catch::Contains("sums to 5, but axis 1 has size 4"));
}

TEST_CASE("an artifact resizes by scales and sizes given at run time for listed axes",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  GraphBuilder b(ctx, "resize");
  const ValueId x = b.add_input("x", {DType::f32, {1, 2, 5, 7}});
  const ValueId scales = b.add_input("scales", {DType::f32, {2}});
  const ValueId sizes = b.add_input("sizes", {DType::i64, {2}});
  const ValueId linear =
      *b.add("Resize", {x, kNoValue, scales, kNoValue}, attrs<ResizeAttrs>([](auto& a) {
               a.mode = "linear";
               a.axes = {2, 3};
             }));
  const ValueId nearest =
      *b.add("Resize", {x, kNoValue, kNoValue, sizes}, attrs<ResizeAttrs>([](auto& a) {
               a.axes = {3, 2};
               a.keep_aspect_ratio_policy = "not_larger";
             }));
  const ValueId cubic =
      *b.add("Resize", {x, kNoValue, scales, kNoValue}, attrs<ResizeAttrs>([](auto& a) {
               a.mode = "cubic";
               a.coordinate_transformation_mode = "half_pixel_symmetric";
               a.axes = {-1, -2};
             }));
  for (ValueId v : {linear, nearest, cubic}) b.add_output(v);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto m = split_artifact(ctx, *g);
  const Tensor in = random_f32({1, 2, 5, 7}, 17);
  struct Case {
    std::vector<float> scales;
    std::vector<int64_t> sizes;
    Shape linear, nearest;
  };
  const Case cases[] = {{{2.f, 0.6f}, {9, 4}, {1, 2, 10, 4}, {1, 2, 4, 6}},
                        {{0.5f, 1.5f}, {3, 20}, {1, 2, 2, 10}, {1, 2, 2, 3}}};
  for (const Case& c : cases) {
    const std::vector<Tensor> inputs = {in, Tensor::from_f32({2}, c.scales),
                                        Tensor::from_i64({2}, c.sizes)};
    std::string message;
    const std::vector<Tensor> got = run_outputs(m.get(), inputs, &message);
    INFO(message);
    REQUIRE(got.size() == 3);
    auto want = run_reference(*g, inputs);
    INFO(want.status().ToString());
    REQUIRE(want.ok());
    CHECK(got[0].shape() == c.linear);
    CHECK(got[1].shape() == c.nearest);
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].identical((*want)[i]));
  }
  std::string message;
  run_outputs(m.get(),
              {in, Tensor::from_f32({2}, std::vector<float>{0.f, 1.f}),
               Tensor::from_i64({2}, std::vector<int64_t>{2, 2})},
              &message);
  CHECK_THAT(message, Catch::Contains("Resize") && Catch::Contains("scale 0 for axis 2 must be > 0"));
}

// x of `t` [3x4], axes i64[1] -> ReduceSum(x, axes) -> Log, Cos, Sin (each an output): the
// functions after a reduction over axes given at run time (ReduceLogSum's expansion).
Graph functions_graph(const Context& ctx, DType t) {
  GraphBuilder b(ctx, "functions");
  const ValueId x = b.add_input("x", {t, {3, 4}});
  const ValueId axes = b.add_input("axes", {DType::i64, {1}});
  const ValueId sum = *b.add("ReduceSum", {x, axes});
  for (const char* op : {"Log", "Cos", "Sin"}) b.add_output(*b.add(op, {sum}));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

TEST_CASE("the dynamic module takes Log, Cos and Sin on f32 and f64", "[runtime][dynamic-shapes]") {
  Context ctx;
  for (DType t : {DType::f32, DType::f64}) {
    INFO(dtype_name(t));
    const Graph g = functions_graph(ctx, t);
    BackendRegistry backends = backends_with_dynamic();
    auto model = compile_placement(ctx, backends, g, split_placement(g));
    INFO(model.status().ToString());
    REQUIRE(model.ok());
    Tensor x = random_f32({3, 4}, 6, 0.1f, 2.f);
    if (t == DType::f64) {
      Tensor x64(DType::f64, {3, 4});
      for (int64_t i = 0; i < 12; ++i) x64.data<double>()[i] = x.data<float>()[i];
      x = x64;
    }
    for (int64_t axis : {0, 1, -1}) {
      const std::vector<Tensor> in = {x, Tensor::from_i64({1}, std::vector<int64_t>{axis})};
      auto got = model->run(in);
      INFO(got.status().ToString());
      REQUIRE(got.ok());
      auto want = run_reference(g, in);
      REQUIRE(want.ok());
      for (size_t i = 0; i < 3; ++i) CHECK(max_relative_error((*got)[i], (*want)[i]) < 1e-6);
    }
  }
}

TEST_CASE("in process, the dynamic backend runs the same kernels", "[runtime][dynamic-shapes]") {
  Context ctx;
  const Graph g = nonzero_graph(ctx);
  BackendRegistry backends = backends_with_dynamic();
  auto model = compile_placement(ctx, backends, g, split_placement(g));
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  const Tensor x = random_f32({12}, 4);
  auto got = model->run({x});
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  auto want = run_reference(g, {x});
  REQUIRE(want.ok());
  CHECK((*got)[0].identical((*want)[0]));
  CHECK((*got)[1].identical((*want)[1]));
}

}  // namespace
}  // namespace collage::testing

namespace collage::testing {
namespace {

// size, bins, dft, rate i64[] and lo, hi f32[] -> HannWindow(size), HammingWindow(size;
// symmetric), BlackmanWindow(size), MelWeightMatrix(bins, dft, rate, lo, hi): shapes follow the
// values.
Graph generators_graph(const Context& ctx) {
  GraphBuilder b(ctx, "generators");
  const ValueId size = b.add_input("size", {DType::i64, {}});
  std::vector<ValueId> mel_in;
  for (const char* n : {"bins", "dft", "rate"}) mel_in.push_back(b.add_input(n, {DType::i64, {}}));
  for (const char* n : {"lo", "hi"}) mel_in.push_back(b.add_input(n, {DType::f32, {}}));
  b.add_output(*b.add("HannWindow", {size}));
  b.add_output(*b.add("HammingWindow", {size},
                      attrs<SignalWindowAttrs>([](auto& a) { a.periodic = 0; })));
  b.add_output(*b.add("BlackmanWindow", {size}));
  b.add_output(*b.add("MelWeightMatrix", mel_in));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

TEST_CASE("an artifact generates windows and mel weights of sizes given at run time",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  const Graph g = generators_graph(ctx);
  for (const Node& n : g.nodes()) CHECK(g.value(n.outputs[0]).type.is_dynamic());
  BackendRegistry backends = backends_with_dynamic();
  auto m = split_artifact(ctx, g);
  auto model = compile_placement(ctx, backends, g, split_placement(g));
  REQUIRE(model.ok());
  auto i64 = [](int64_t v) { return Tensor::scalar_i64(v); };
  for (int64_t size : {1, 10, 33}) {
    const std::vector<Tensor> in = {i64(size),   i64(8),  i64(64), i64(16000),
                                    Tensor::scalar_f32(20), Tensor::scalar_f32(7000)};
    auto want = run_reference(g, in);
    INFO(want.status().ToString());
    REQUIRE(want.ok());
    std::string message;
    const std::vector<Tensor> got = run_outputs(m.get(), in, &message);
    INFO(message);
    REQUIRE(got.size() == 4);
    auto in_process = model->run(in);
    REQUIRE(in_process.ok());
    CHECK(got[0].shape() == Shape{size});
    CHECK(got[3].shape() == Shape{33, 8});
    for (size_t i = 0; i < 4; ++i) {
      CHECK(got[i].identical((*want)[i]));
      CHECK((*in_process)[i].identical((*want)[i]));
    }
  }
  std::string message;
  run_outputs(m.get(), {i64(-3), i64(8), i64(64), i64(16000), Tensor::scalar_f32(20),
                        Tensor::scalar_f32(7000)},
              &message);
  CHECK_THAT(message, Catch::Contains("HannWindow") && Catch::Contains("size is -3"));
  run_outputs(m.get(), {i64(4), i64(8), i64(64), i64(16000), Tensor::scalar_f32(20),
                        Tensor::scalar_f32(20000)},
              &message);
  CHECK_THAT(message, Catch::Contains("MelWeightMatrix") && Catch::Contains("sample_rate / 2"));
}

// x f32[2x5x6], target i64[2], theta f32[2x2x3], size i64[4], cols f32[1x8x?], image and block
// i64[2] -> CenterCropPad(x, target; axes 2, 1), Shape of it (from 1), AffineGrid(theta, size;
// align_corners), Col2Im(cols, image, block; pads, strides).
Graph geometry_graph(const Context& ctx) {
  GraphBuilder b(ctx, "geometry");
  const ValueId x = b.add_input("x", {DType::f32, {2, 5, 6}});
  const ValueId target = b.add_input("target", {DType::i64, {2}});
  const ValueId theta = b.add_input("theta", {DType::f32, {2, 2, 3}});
  const ValueId size = b.add_input("size", {DType::i64, {4}});
  const ValueId cols = b.add_input("cols", {DType::f32, {1, 8, 12}});
  const ValueId image = b.add_input("image", {DType::i64, {2}});
  const ValueId block = b.add_input("block", {DType::i64, {2}});
  const ValueId cropped = *b.add("CenterCropPad", {x, target},
                                 attrs<CenterCropPadAttrs>([](auto& a) { a.axes = {2, 1}; }));
  b.add_output(cropped);
  b.add_output(*b.add("Shape", {cropped}, attrs<ShapeAttrs>([](auto& a) { a.start = 1; })));
  b.add_output(*b.add("AffineGrid", {theta, size},
                      attrs<AffineGridAttrs>([](auto& a) { a.align_corners = 1; })));
  b.add_output(*b.add("Col2Im", {cols, image, block}, attrs<Col2ImAttrs>([](auto& a) {
                        a.pads = {1, 0, 0, 1};
                        a.strides = {1, 2};
                      })));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

TEST_CASE("an artifact crops, pads, makes grids and folds columns by shapes given at run time",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  const Graph g = geometry_graph(ctx);
  BackendRegistry backends = backends_with_dynamic();
  auto m = split_artifact(ctx, g);
  auto model = compile_placement(ctx, backends, g, split_placement(g));
  REQUIRE(model.ok());
  const Tensor x = random_f32({2, 5, 6}, 21), theta = random_f32({2, 2, 3}, 22);
  const Tensor cols = random_f32({1, 8, 12}, 23);
  struct Case {
    std::vector<int64_t> target, size, image;
    Shape cropped, grid, folded;
  };
  // Col2Im: a 2x2 block over 2 channels (8 = 2 x 4), one padded row above, one padded column
  // on the right, column stride 2: an H x W image has H x ((W - 1) / 2 + 1) positions, 12 for
  // 4 x 5 and 3 x 7.
  const Case cases[] = {{{4, 7}, {2, 1, 3, 4}, {4, 5}, {2, 7, 4}, {2, 3, 4, 2}, {1, 2, 4, 5}},
                        {{9, 2}, {2, 3, 1, 5}, {3, 7}, {2, 2, 9}, {2, 1, 5, 2}, {1, 2, 3, 7}}};
  for (const Case& c : cases) {
    const std::vector<Tensor> in = {x, i64s(c.target), theta, i64s(c.size), cols, i64s(c.image),
                                    i64s({2, 2})};
    auto want = run_reference(g, in);
    INFO(want.status().ToString());
    REQUIRE(want.ok());
    std::string message;
    const std::vector<Tensor> got = run_outputs(m.get(), in, &message);
    INFO(message);
    REQUIRE(got.size() == 4);
    auto in_process = model->run(in);
    INFO(in_process.status().ToString());
    REQUIRE(in_process.ok());
    CHECK(got[0].shape() == c.cropped);
    CHECK(got[2].shape() == c.grid);
    CHECK(got[3].shape() == c.folded);
    for (size_t i = 0; i < 4; ++i) {
      CHECK(got[i].identical((*want)[i]));
      CHECK((*in_process)[i].identical((*want)[i]));
    }
  }
  std::string message;
  run_outputs(m.get(), {x, i64s({4, -1}), theta, i64s({2, 1, 3, 4}), cols, i64s({4, 5}),
                        i64s({2, 2})},
              &message);
  CHECK_THAT(message, Catch::Contains("CenterCropPad") && Catch::Contains("shape -1 on axis 1"));
  run_outputs(m.get(), {x, i64s({4, 7}), theta, i64s({2, 1, 3, 4}), cols, i64s({7, 5}),
                        i64s({2, 2})},
              &message);
  CHECK_THAT(message, Catch::Contains("Col2Im") && Catch::Contains("must be N x C * 4 x 21"));
}

TEST_CASE("the dynamic module runs Dropout with ratio and training_mode given at run time",
          "[runtime][dynamic-shapes]") {
  Context ctx;
  GraphBuilder b(ctx, "dropout");
  const ValueId x = b.add_input("x", {DType::f32, {3, 4}});
  const ValueId ratio = b.add_input("ratio", {DType::f32, {}});
  const ValueId training = b.add_input("training", {DType::boolean, {}});
  auto outs = b.add_node("Dropout", {x, ratio, training}, nullptr, "drop", 2);
  REQUIRE(outs.ok());
  b.add_output((*outs)[0]);
  b.add_output((*outs)[1]);
  auto g = b.finish();
  REQUIRE(g.ok());
  BackendRegistry backends = backends_with_dynamic();
  // Its shapes are static: the node goes to `dynamic` for the values it reads at run time.
  Placement p;
  p.strategy = "test";
  p.groups.push_back({NodeSet::of(1, {0}), "dynamic"});
  auto model = compile_placement(ctx, backends, *g, p);
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  const Tensor xv = random_f32({3, 4}, 31);
  auto flag = [](bool v) {
    Tensor t(DType::boolean, {});
    *static_cast<uint8_t*>(t.raw()) = v;
    return t;
  };
  for (auto [r, t] : {std::pair{0.5f, false}, std::pair{0.f, true}}) {
    const std::vector<Tensor> in = {xv, Tensor::scalar_f32(r), flag(t)};
    auto got = model->run(in);
    INFO(got.status().ToString());
    REQUIRE(got.ok());
    auto want = run_reference(*g, in);
    REQUIRE(want.ok());
    CHECK((*got)[0].identical((*want)[0]));
    CHECK((*got)[1].identical((*want)[1]));
  }
  auto refused = model->run({xv, Tensor::scalar_f32(0.25f), flag(true)});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("Dropout") && Catch::Contains("collage runs inference only"));
}

}  // namespace
}  // namespace collage::testing
