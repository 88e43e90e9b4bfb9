// One backend conformance suite over the backend registry: the built-in backends
// (register_builtin_backends) and a C plugin (examples/c_plugin). For every operator case x
// element type x shape class (odd sizes, broadcast, empty, large), every backend whose patterns
// or rules claim the one-node graph builds it, runs it in process (compile_placement) and as an
// artifact loaded by libcollage_runtime with its runtime module, and must agree with the
// reference executor. A backend may decline to build what it claims (an error naming why), never
// crash or compute something else.
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "collage/compiler.h"
#include "collage/executor.h"
#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/ops/normalization.h"
#include "collage/ops/tensor.h"
#include "collage/reference.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"

namespace collage {
namespace {

enum class ShapeClass { odd, broadcast, empty, large };

const char* shape_class_name(ShapeClass c) {
  switch (c) {
    case ShapeClass::odd:
      return "odd";
    case ShapeClass::broadcast:
      return "broadcast";
    case ShapeClass::empty:
      return "empty";
    case ShapeClass::large:
      return "large";
  }
  return "?";
}

// An operator under test: its input shapes per shape class (none: the class does not apply),
// the element types it is tried with, and how its result is compared.
struct OpCase {
  std::string op;
  std::vector<DType> dtypes;
  std::function<std::vector<Shape>(ShapeClass)> shapes;
  bool scaled = false;  // compare relative to the output's scale (reductions), not per element
  std::shared_ptr<const OpAttrs> attrs;  // null: the defaults
  bool constant_weight = false;          // the last input is a constant (a layer's weights)
};

std::vector<Shape> unary_shapes(ShapeClass c) {
  switch (c) {
    case ShapeClass::odd:
      return {{7, 13}};
    case ShapeClass::empty:
      return {{0, 13}};
    case ShapeClass::large:
      return {{67, 1031}};
    case ShapeClass::broadcast:
      return {};
  }
  return {};
}

std::vector<Shape> binary_shapes(ShapeClass c) {
  switch (c) {
    case ShapeClass::odd:
      return {{7, 13}, {7, 13}};
    case ShapeClass::broadcast:
      return {{3, 1, 13}, {7, 1}};
    case ShapeClass::empty:
      return {{0, 13}, {13}};
    case ShapeClass::large:
      return {{67, 1031}, {1031}};
  }
  return {};
}

std::vector<Shape> conv_shapes(ShapeClass c) {
  switch (c) {
    case ShapeClass::odd:
      return {{1, 3, 9, 11}, {5, 3, 3, 3}};
    case ShapeClass::empty:
      return {{0, 3, 9, 11}, {5, 3, 3, 3}};
    case ShapeClass::large:
      return {{1, 16, 56, 56}, {32, 16, 3, 3}};
    case ShapeClass::broadcast:
      return {};
  }
  return {};
}

std::vector<Shape> matmul_shapes(ShapeClass c) {
  switch (c) {
    case ShapeClass::odd:
      return {{7, 13}, {13, 5}};
    case ShapeClass::broadcast:
      return {{3, 7, 13}, {13, 5}};
    case ShapeClass::empty:
      return {{0, 13}, {13, 5}};
    case ShapeClass::large:
      return {{130, 257}, {257, 129}};
  }
  return {};
}

// One N x C x H x W input (the normalisations over channels and spatial axes).
std::vector<Shape> image_shapes(ShapeClass c) {
  switch (c) {
    case ShapeClass::odd:
      return {{2, 5, 9, 11}};
    case ShapeClass::empty:
      return {{0, 5, 9, 11}};
    case ShapeClass::large:
      return {{1, 32, 56, 56}};
    case ShapeClass::broadcast:
      return {};
  }
  return {};
}

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    const std::vector<DType> f32 = {DType::f32};
    const std::vector<DType> numeric = {DType::f32, DType::i32, DType::i64};
    std::vector<OpCase> c;
    for (const char* op : {"Relu", "Neg", "Abs"}) c.push_back({op, numeric, unary_shapes});
    for (const char* op : {"Sigmoid", "Tanh", "Exp"}) c.push_back({op, f32, unary_shapes});
    for (const char* op : {"Add", "Sub", "Mul", "Max", "Min"})
      c.push_back({op, numeric, binary_shapes});
    c.push_back({"MatMul", f32, matmul_shapes, /*scaled=*/true});
    c.push_back({"Softmax", f32, unary_shapes, /*scaled=*/true, std::make_shared<SoftmaxAttrs>()});
    auto reduce_last = std::make_shared<ReduceAttrs>();
    reduce_last->axes = {-1};
    reduce_last->keepdims = 0;
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"})
      c.push_back({op, f32, unary_shapes, /*scaled=*/true, reduce_last});
    auto swap = std::make_shared<TransposeAttrs>();
    swap->perm = {1, 0};
    c.push_back({"Transpose", numeric, unary_shapes, /*scaled=*/false, swap});
    c.push_back({"Conv", f32, conv_shapes, /*scaled=*/true, std::make_shared<ConvAttrs>(),
                 /*constant_weight=*/true});
    c.push_back({"GlobalMaxPool", f32, image_shapes});
    auto lrn = std::make_shared<LRNAttrs>();
    lrn->size = 3;
    c.push_back({"LRN", f32, image_shapes, /*scaled=*/true, lrn});
    c.push_back({"MeanVarianceNormalization", f32, image_shapes, /*scaled=*/true,
                 std::make_shared<MeanVarianceNormalizationAttrs>()});
    return c;
  }();
  return cases;
}

// Uniform values: floats in [-1, 1), integers in [-5, 5).
Tensor random_tensor(DType dtype, const Shape& shape, uint64_t seed) {
  if (dtype == DType::f32) return testing::random_f32(shape, seed);
  Tensor t(dtype, shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-5, 4);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::i32)
      t.data<int32_t>()[i] = dist(rng);
    else
      t.data<int64_t>()[i] = dist(rng);
  }
  return t;
}

// A one-node graph of the case's operator over graph inputs of the types of `values` (the last
// one a constant with those values when the case says so); nullopt when the operator refuses
// these types (then no backend is asked).
std::optional<Graph> one_node_graph(const Context& ctx, const OpCase& oc, DType dtype,
                                    const std::vector<Tensor>& values) {
  GraphBuilder b(ctx, oc.op);
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < values.size(); ++i)
    inputs.push_back(oc.constant_weight && i + 1 == values.size()
                         ? b.add_constant("w", values[i])
                         : b.add_input("x" + std::to_string(i), values[i].type()));
  auto y = b.add(oc.op, inputs, oc.attrs, "op");
  if (!y.ok()) return std::nullopt;
  b.add_output(*y);
  auto g = b.finish();
  if (!g.ok()) return std::nullopt;
  return *std::move(g);
}

// Whether `backend` offers the graph's one node as a candidate.
bool claims(const Backend& backend, const Graph& g) {
  GraphReachability reach(g);
  for (const Candidate& c : backend.candidates(g, reach))
    if (c.nodes.count() == g.nodes().size()) return true;
  return false;
}

void check_close(const Tensor& actual, const Tensor& expected, bool scaled) {
  INFO(testing::describe_mismatch(actual, expected));
  REQUIRE(actual.type() == expected.type());
  if (actual.numel() == 0) return;
  if (expected.dtype() != DType::f32) {
    CHECK(testing::max_relative_error(actual, expected) == 0);
  } else if (scaled) {
    CHECK(testing::max_scaled_error(actual, expected) < 1e-5);
  } else {
    CHECK(testing::max_relative_error(actual, expected) < 1e-5);
  }
}

// What each backend did over the whole suite.
struct Tally {
  int claimed = 0, declined = 0, in_process = 0, artifact = 0;
};

// The one-node graph `g` placed whole on `backend`: built and run in process, then written as an
// artifact, loaded by the runtime (plugin modules from `load`) and run; both against `expected`.
void check_backend(const Compiler& compiler, const Backend& backend, const Graph& g,
                   const std::vector<Tensor>& inputs, const Tensor& expected, bool scaled,
                   const collage_load_options_t& load, Tally& t) {
  ++t.claimed;
  Placement placement;
  std::vector<NodeId> nodes;
  for (size_t n = 0; n < g.nodes().size(); ++n) nodes.push_back(static_cast<NodeId>(n));
  PlacedGroup& group = placement.groups.emplace_back();
  group.nodes = NodeSet::of(g.nodes().size(), nodes);
  group.backend = backend.name();
  BuildOptions build;
  build.num_threads = 2;
  auto model = compile_placement(compiler.context(), compiler.backends(), g, placement, build);
  if (!model.ok()) {
    // Declined: the error names the group and its backend, and says why.
    INFO(model.status());
    CHECK_THAT(std::string(model.status().message()), Catch::Contains(backend.name()));
    ++t.declined;
    return;
  }
  auto out = model->run(inputs);
  INFO(out.status());
  CHECK(out.ok());
  if (!out.ok() || out->size() != 1) return;
  check_close((*out)[0], expected, scaled);
  ++t.in_process;

  auto bytes = compile_artifact(compiler.context(), compiler.backends(), g, placement);
  INFO(bytes.status());
  CHECK(bytes.ok());
  if (!bytes.ok()) return;
  collage_module_t* m = nullptr;
  const std::string loaded =
      testing::take_message(collage_module_load_memory(bytes->data(), bytes->size(), &load, &m));
  CHECK(loaded == "");
  if (!m) return;
  int32_t code = 0;
  std::string message;
  std::vector<Tensor> ran = testing::run_module(m, inputs, &code, &message);
  collage_module_release(m);
  INFO(message);
  CHECK(ran.size() == 1);
  if (ran.size() != 1) return;
  check_close(ran[0], expected, scaled);
  ++t.artifact;
}

TEST_CASE(
    "conformance: every backend that claims an operator agrees with the reference, in "
    "process and from an artifact",
    "[conformance]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  REQUIRE(compiler->load_plugin(COLLAGE_GEMM_PLUGIN).ok());
  collage_load_options_t load;
  collage_load_options_init(&load);
  load.module_dir = COLLAGE_PLUGIN_MODULE_DIR;  // the plugin's runtime module
  std::map<std::string, Tally> tally;
  int graphs = 0;

  for (const OpCase& oc : op_cases())
    for (DType dtype : oc.dtypes)
      for (ShapeClass sc :
           {ShapeClass::odd, ShapeClass::broadcast, ShapeClass::empty, ShapeClass::large}) {
        const std::vector<Shape> shapes = oc.shapes(sc);
        if (shapes.empty()) continue;  // the class does not apply
        std::vector<Tensor> values;
        for (size_t i = 0; i < shapes.size(); ++i)
          values.push_back(random_tensor(dtype, shapes[i], 11 + i));
        std::optional<Graph> g = one_node_graph(compiler->context(), oc, dtype, values);
        if (!g) continue;
        ++graphs;
        std::vector<Tensor> inputs(values.begin(), values.end() - (oc.constant_weight ? 1 : 0));
        auto expected = run_reference(*g, inputs);
        REQUIRE(expected.ok());
        for (const Backend* backend : compiler->backends().all()) {
          if (backend->name() == kReferenceBackend || !claims(*backend, *g)) continue;
          INFO(oc.op << " " << dtype_name(dtype) << " " << shape_class_name(sc) << " on "
                     << backend->name());
          check_backend(*compiler, *backend, *g, inputs, (*expected)[0], oc.scaled, load,
                        tally[backend->name()]);
        }
      }

  // The suite is not vacuous: each backend of the registry that runs these operators ran some
  // in both forms (trees runs TreeEnsemble only: tests/trees). A new backend adds its line here.
  CHECK(graphs > 50);
  const char* const exercised[] = {
      "native",
      "dnnl",
      "eigen",
      "cgemm",
  };
  for (const char* name : exercised) {
    INFO(name);
    CHECK(tally[name].in_process > 0);
    CHECK(tally[name].artifact == tally[name].in_process);
  }
  for (const auto& [name, t] : tally)
    WARN(name << ": claimed " << t.claimed << ", declined " << t.declined << ", in process "
              << t.in_process << ", artifact " << t.artifact);
}

}  // namespace
}  // namespace collage
