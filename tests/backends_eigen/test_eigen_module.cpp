// The Eigen runtime module's C interface: the shared library exports only its entry point and
// runs what the compiler built; corrupt parameters and descriptors give errors, never crashes.
#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/ops.h"
#include "common/test_util.h"
#include "eigen_cases.h"
#include "eigen_module.h"
#include "eigen_params.h"

using namespace collage;
using namespace collage::testing;

namespace {

Graph finish(GraphBuilder& b, ValueId out) {
  b.add_output(out);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

// One small graph per kernel kind, each claimed whole by the Eigen backend.
std::vector<Graph> one_graph_per_kind(const Context& ctx) {
  std::vector<Graph> graphs;
  {
    GraphBuilder b(ctx, "matmul");
    ValueId x = b.add_input("x", {DType::f32, {2, 3, 4}});
    ValueId w = b.add_input("w", {DType::f32, {2, 4, 5}});
    ValueId bias = b.add_constant("bias", random_f32({5}, 3));
    graphs.push_back(finish(b, *b.add("Relu", {*b.add("Add", {*b.add("MatMul", {x, w}), bias})})));
  }
  {
    GraphBuilder b(ctx, "conv");
    ValueId x = b.add_input("x", {DType::f32, {1, 4, 6, 6}});
    ValueId w = b.add_constant("w", random_f32({6, 2, 3, 3}, 4));
    ValueId bias = b.add_constant("b", random_f32({6}, 5));
    auto attrs = make_attrs<ConvAttrs>([](ConvAttrs& a) {
      a.group = 2;
      a.pads = {1, 1, 1, 1};
    });
    graphs.push_back(finish(b, *b.add("Sigmoid", {*b.add("Conv", {x, w, bias}, attrs)})));
  }
  {
    GraphBuilder b(ctx, "elementwise");
    ValueId x = b.add_input("x", {DType::f32, {3, 7}});
    ValueId y = b.add_input("y", {DType::f32, {7}});
    graphs.push_back(finish(b, *b.add("Tanh", {*b.add("Sub", {y, x})})));
  }
  {
    GraphBuilder b(ctx, "reduce");
    ValueId x = b.add_input("x", {DType::f32, {3, 5, 4}});
    auto attrs = make_attrs<ReduceAttrs>([](ReduceAttrs& a) { a.axes = {1}; });
    graphs.push_back(finish(b, *b.add("ReduceMean", {x}, attrs)));
  }
  {
    GraphBuilder b(ctx, "softmax");
    ValueId x = b.add_input("x", {DType::f32, {3, 5, 4}});
    auto attrs = make_attrs<SoftmaxAttrs>([](SoftmaxAttrs& a) { a.axis = 1; });
    graphs.push_back(finish(b, *b.add("LogSoftmax", {x}, attrs)));
  }
  return graphs;
}

KernelRecord record_of(const Graph& g) {
  auto kernel = make_eigen_backend()->build(g, {});
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  return (*kernel)->record();
}

std::string create_error(const KernelRecord& record, const Graph& g) {
  ModuleInstance instance(rt_eigen::module_table(), record, g);
  return instance.ok() ? "" : instance.error();
}

}  // namespace

TEST_CASE("eigen module: the table names the module", "[eigen]") {
  const collage_rt_module_v1_t* m = rt_eigen::module_table();
  CHECK(m->struct_size == sizeof(collage_rt_module_v1_t));
  CHECK(m->abi_version == COLLAGE_RT_MODULE_ABI_VERSION);
  CHECK(std::string(m->name) == "eigen");
  CHECK(std::string(m->version) == make_eigen_backend()->version());
}

TEST_CASE("eigen module: truncated, extended and corrupt parameters are errors", "[eigen]") {
  Context ctx;
  for (const Graph& g : one_graph_per_kind(ctx)) {
    const KernelRecord good = record_of(g);
    INFO("kernel " << good.entry);
    REQUIRE(create_error(good, g).empty());
    for (size_t n = 0; n < good.params.size(); ++n) {
      KernelRecord bad = good;
      bad.params.resize(n);
      const std::string e = create_error(bad, g);
      INFO("truncated to " << n << " bytes: " << e);
      CHECK_THAT(e, Catch::Contains("truncated") || Catch::Contains("bad magic"));
    }
    KernelRecord longer = good;
    longer.params.push_back(0);
    CHECK_THAT(create_error(longer, g), Catch::Contains("unexpected trailing bytes"));
    KernelRecord version = good;
    version.params[4] = 9;
    CHECK_THAT(create_error(version, g), Catch::Contains("version 9 is not supported"));

    // Every single-byte corruption either is refused or yields a kernel that runs in bounds
    // (the sanitizer build checks the "in bounds").
    const std::vector<Tensor> inputs = random_inputs(g, 3);
    int refused = 0;
    for (size_t i = 8; i < good.params.size(); ++i) {
      for (uint8_t value : {uint8_t{0}, uint8_t{0xFF}, uint8_t(good.params[i] ^ 1),
                            uint8_t(good.params[i] + 0x80)}) {
        KernelRecord bad = good;
        bad.params[i] = value;
        ModuleInstance instance(rt_eigen::module_table(), bad, g);
        if (!instance.ok()) {
          CHECK_FALSE(instance.error().empty());
          ++refused;
          continue;
        }
        instance.run(inputs, instance.task_count());
      }
    }
    CHECK(refused > 0);
  }
}

TEST_CASE("eigen module: bad descriptors and operands are errors", "[eigen]") {
  Context ctx;
  const Graph g = one_graph_per_kind(ctx)[0];
  const KernelRecord good = record_of(g);

  KernelRecord entry = good;
  entry.entry = "winograd";
  CHECK_THAT(create_error(entry, g), Catch::Contains("unknown kernel entry 'winograd'"));

  rt_eigen::MatMulParams p;
  REQUIRE(rt_eigen::decode_params(good.params.data(), good.params.size(), p).empty());
  KernelRecord operand = good;
  p.a.index = 7;
  operand.params = rt_eigen::encode_params(p);
  CHECK_THAT(create_error(operand, g), Catch::Contains("argument 7 is not an input"));
  p.a.index = 0;
  p.b = {rt_eigen::OperandSource::constant, 3};
  operand.params = rt_eigen::encode_params(p);
  CHECK_THAT(create_error(operand, g), Catch::Contains("constant 3 does not exist"));
  p.b = {rt_eigen::OperandSource::arg, 1};
  p.m = 4;  // A holds 2 x 3 x 4, not 2 x 4 x 4
  operand.params = rt_eigen::encode_params(p);
  CHECK_THAT(create_error(operand, g), Catch::Contains("elements, the parameters describe"));
  p.m = 3;
  p.a_batch_strides = {13};
  operand.params = rt_eigen::encode_params(p);
  CHECK_THAT(create_error(operand, g),
             Catch::Contains("matmul input A: argument 0 of shape 2x3x4"));

  // The same record for a group whose types differ from the ones it was built for.
  GraphBuilder b(ctx, "other");
  ValueId x = b.add_input("x", {DType::f32, {2, 3, 4}});
  ValueId w = b.add_input("w", {DType::f32, {2, 4, 6}});
  ValueId bias = b.add_constant("bias", random_f32({6}, 3));
  const Graph other = finish(b, *b.add("Relu", {*b.add("Add", {*b.add("MatMul", {x, w}), bias})}));
  CHECK_THAT(create_error(good, other), Catch::Contains("output of shape 2x3x6 has 36 elements"));

  collage_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.entry = "matmul";
  desc.params = good.params.data();
  desc.params_size = good.params.size();
  desc.num_args = 1;
  desc.num_inputs = 2;
  void* kernel = nullptr;
  char err[256] = {0};
  const collage_rt_module_v1_t* m = rt_eigen::module_table();
  CHECK(m->kernel_create(&desc, &kernel, err, sizeof err) != 0);
  CHECK(kernel == nullptr);
  CHECK_THAT(std::string(err), Catch::Contains("bad argument counts"));
  const int64_t dims[] = {-1};
  collage_tensor_desc_t negative = {COLLAGE_DTYPE_F32, 1, dims};
  desc.num_args = 1;
  desc.num_inputs = 0;
  desc.args = &negative;
  CHECK(m->kernel_create(&desc, &kernel, err, sizeof err) != 0);
  CHECK_THAT(std::string(err), Catch::Contains("negative or oversized shape"));
  CHECK(m->kernel_create(nullptr, &kernel, err, sizeof err) != 0);
  CHECK_THAT(std::string(err), Catch::Contains("null kernel descriptor"));
  m->kernel_destroy(nullptr);
}

TEST_CASE("eigen module: run checks the task index", "[eigen]") {
  Context ctx;
  const Graph g = one_graph_per_kind(ctx)[2];
  const KernelRecord record = record_of(g);
  void* args[3] = {nullptr, nullptr, nullptr};
  char err[256] = {0};
  // A task outside [0, task_count) is refused before any buffer is touched.
  auto* table = rt_eigen::module_table();
  void* raw = nullptr;
  {
    collage_kernel_desc_t desc{};
    std::vector<TensorType> types = {g.value(g.inputs()[0]).type, g.value(g.inputs()[1]).type,
                                     g.value(g.outputs()[0]).type};
    std::vector<collage_tensor_desc_t> descs;
    for (const TensorType& t : types)
      descs.push_back({COLLAGE_DTYPE_F32, static_cast<int32_t>(t.shape.size()), t.shape.data()});
    desc.struct_size = sizeof desc;
    desc.entry = record.entry.c_str();
    desc.params = record.params.data();
    desc.params_size = record.params.size();
    desc.num_args = 3;
    desc.num_inputs = 2;
    desc.args = descs.data();
    REQUIRE(table->kernel_create(&desc, &raw, err, sizeof err) == 0);
  }
  CHECK(table->kernel_run(raw, args, 2, 2, err, sizeof err) != 0);
  CHECK_THAT(std::string(err), Catch::Contains("task 2 of 2 is out of range"));
  CHECK(table->kernel_run(raw, args, 0, 0, err, sizeof err) != 0);
  table->kernel_destroy(raw);
}

TEST_CASE("eigen module: the shared library exports only its entry point and runs records",
          "[eigen]") {
  const std::string path = COLLAGE_RT_EIGEN_PATH;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO(path << ": " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  auto get = reinterpret_cast<collage_rt_module_v1_get_fn>(dlsym(lib, "collage_rt_module_v1_get"));
  REQUIRE(get != nullptr);
  CHECK(dlsym(lib, "_ZN7collage8rt_eigen12module_tableEv") == nullptr);
  const collage_rt_module_v1_t* m = get();
  CHECK(std::string(m->name) == "eigen");
  CHECK(m != rt_eigen::module_table());

  Context ctx;
  for (const Graph& g : one_graph_per_kind(ctx)) {
    const KernelRecord record = record_of(g);
    INFO("kernel " << record.entry);
    const std::vector<Tensor> inputs = random_inputs(g, 11);
    ModuleInstance in_process(rt_eigen::module_table(), record, g);
    ModuleInstance loaded(m, record, g);
    REQUIRE(in_process.ok());
    REQUIRE(loaded.ok());
    std::vector<Tensor> a = in_process.run(inputs, in_process.task_count());
    std::vector<Tensor> b = loaded.run(inputs, loaded.task_count());
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CHECK(a[0].identical(b[0]));
  }
  dlclose(lib);
}
