// The dnnl runtime module: loaded as libcollage_rt_dnnl.so it runs the compiler's records; bad
// descriptors and corrupted parameters give errors, never crashes; one kernel runs on many
// threads at once; OpenMP's thread count is restored after a run.
#include <dlfcn.h>
#include <omp.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <thread>

#include "collage/backends/dnnl.h"
#include "collage/ops.h"
#include "collage/subgraph.h"
#include "common/test_util.h"
#include "dnnl_module.h"
#include "dnnl_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Conv 3x3 (3 -> 16 channels) + BN + Add(input) + Relu, built by the dnnl backend.
struct Built {
  TestGraph t;
  Graph g;
  ExtractedSubgraph sub;
  std::unique_ptr<Kernel> kernel;
  std::vector<Tensor> inputs;
};

std::unique_ptr<Built> build_conv_group(const BuildOptions& options = {}) {
  auto b = std::make_unique<Built>();
  TestGraph& t = b->t;
  ValueId v = t.op("Conv", {t.input({1, 3, 7, 9}), t.constant({16, 3, 3, 3}), t.constant({16})},
                   make_attrs<ConvAttrs>([](auto& a) {
                     a.pads = {1, 1, 1, 1};
                   }));
  const Shape ch = {16};
  v = t.op("BatchNormalization",
           {v, t.constant(ch), t.constant(ch), t.constant(ch), t.constant(ch, 0.5f, 2.f)});
  v = t.op("Relu", {t.op("Add", {v, t.input({1, 16, 7, 9})})});
  b->g = t.finish(v);
  NodeSet all(b->g.nodes().size());
  for (size_t n = 0; n < b->g.nodes().size(); ++n) all.insert(static_cast<NodeId>(n));
  auto sub = extract_subgraph(t.context(), b->g, all);
  REQUIRE(sub.ok());
  b->sub = *std::move(sub);
  auto kernel = make_dnnl_backend()->build(b->sub.graph, options);
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  b->kernel = *std::move(kernel);
  b->inputs = t.feed(b->g);
  return b;
}

// Runs `module`'s kernel `instance` on the built inputs; returns the output.
Tensor run_instance(const collage_rt_module_v1_t* module, void* instance, const Built& b) {
  Tensor out(DType::f32, b.g.value(b.g.outputs()[0]).type.shape);
  std::vector<void*> args;
  for (const Tensor& in : b.inputs) args.push_back(const_cast<void*>(in.raw()));
  args.push_back(out.raw());
  char err[256] = {0};
  REQUIRE(module->kernel_run(instance, args.data(), 0, 1, err, sizeof err) == 0);
  return out;
}

Tensor run_kernel(Kernel& k, const Built& b) {
  Tensor out(DType::f32, b.g.value(b.g.outputs()[0]).type.shape);
  std::vector<void*> args;
  for (const Tensor& in : b.inputs) args.push_back(const_cast<void*>(in.raw()));
  args.push_back(out.raw());
  REQUIRE(k.run_task(args.data(), 0).ok());
  return out;
}

// kernel_create on `desc`; returns the error message ("" on success, then runs and destroys).
std::string try_create(const collage_rt_module_v1_t* m, const collage_kernel_desc_t& desc,
                       const Built* run_with = nullptr) {
  void* k = nullptr;
  char err[512] = {0};
  if (m->kernel_create(&desc, &k, err, sizeof err) != 0) {
    CHECK(k == nullptr);
    CHECK(std::strlen(err) > 0);
    return err;
  }
  REQUIRE(k != nullptr);
  if (run_with) {
    // Whatever the (corrupted but accepted) parameters say, every access stays in bounds.
    std::vector<Tensor> bufs;
    std::vector<void*> args;
    for (int32_t i = 0; i < desc.num_args; ++i) {
      const auto& d = desc.args[i];
      bufs.emplace_back(static_cast<DType>(d.dtype), Shape(d.shape, d.shape + d.rank));
      args.push_back(bufs.back().raw());
    }
    m->kernel_run(k, args.data(), 0, 1, err, sizeof err);
  }
  m->kernel_destroy(k);
  return "";
}

}  // namespace

TEST_CASE("dnnl module: the shared library runs the compiler's record", "[dnnl][module]") {
  void* lib = dlopen(COLLAGE_RT_DNNL_PATH, RTLD_NOW | RTLD_LOCAL);
  INFO(COLLAGE_RT_DNNL_PATH << ": " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  auto get = reinterpret_cast<collage_rt_module_v1_get_fn>(dlsym(lib, "collage_rt_module_v1_get"));
  REQUIRE(get != nullptr);
  // Only the entry point is exported.
  CHECK(dlsym(lib, "_ZN7collage7rt_dnnl12module_tableEv") == nullptr);
  const collage_rt_module_v1_t* m = get();
  CHECK(m->struct_size == sizeof(collage_rt_module_v1_t));
  CHECK(m->abi_version == COLLAGE_RT_MODULE_ABI_VERSION);
  CHECK(std::string(m->name) == "dnnl");
  CHECK_THAT(std::string(m->version), Catch::StartsWith("dnnl-2."));

  auto b = build_conv_group();
  const KernelRecord& record = b->kernel->record();
  CHECK(record.module == "dnnl");
  CHECK(record.entry == "conv");
  KernelDesc d(record, b->sub.graph);
  void* instance = nullptr;
  char err[256] = {0};
  REQUIRE(m->kernel_create(&d.desc(), &instance, err, sizeof err) == 0);
  CHECK(m->kernel_task_count(instance) == 1);
  const Tensor from_library = run_instance(m, instance, *b);
  CHECK(from_library.identical(run_kernel(*b->kernel, *b)));
  // A task other than 0 of 1 is an error, not a crash.
  std::vector<void*> none(3, nullptr);
  CHECK(m->kernel_run(instance, none.data(), 1, 2, err, sizeof err) != 0);
  CHECK_THAT(std::string(err), Catch::Contains("one task"));
  m->kernel_destroy(instance);
  m->kernel_destroy(nullptr);
  dlclose(lib);
}

TEST_CASE("dnnl module: bad descriptors are errors", "[dnnl][module]") {
  const collage_rt_module_v1_t* m = rt_dnnl::module_table();
  auto b = build_conv_group();
  const KernelRecord& record = b->kernel->record();
  {
    KernelDesc d(record, b->sub.graph);
    CHECK(try_create(m, d.desc()).empty());
  }
  auto expect_error = [&](const char* what, auto&& corrupt, const char* message) {
    DYNAMIC_SECTION(what) {
      KernelDesc d(record, b->sub.graph);
      corrupt(d.desc());
      CHECK_THAT(try_create(m, d.desc()), Catch::Contains(message));
    }
  };
  expect_error(
      "wrong entry", [](auto& d) { d.entry = "matmul"; }, "does not match");
  expect_error(
      "no entry", [](auto& d) { d.entry = nullptr; }, "no entry");
  expect_error(
      "old struct", [](auto& d) { d.struct_size = 8; }, "too old");
  expect_error(
      "inputs > args", [](auto& d) { d.num_inputs = d.num_args + 1; }, "input count");
  expect_error(
      "missing constant", [](auto& d) { d.num_constants -= 1; }, "constants");
  expect_error(
      "output as input", [](auto& d) { d.num_inputs = d.num_args; }, "out of range");
  expect_error(
      "small constant",
      [](auto& d) {
        static collage_tensor_desc_t tiny[8];
        static const int64_t one = 1;
        for (int i = 0; i < d.num_constants && i < 8; ++i) tiny[i] = {0, 1, &one};
        d.constant_descs = tiny;
      },
      "layout of dims");
  expect_error(
      "integer input",
      [](auto& d) {
        static collage_tensor_desc_t args[8];
        for (int i = 0; i < d.num_args && i < 8; ++i) args[i] = d.args[i];
        args[0].dtype = COLLAGE_DTYPE_I32;
        d.args = args;
      },
      "element type");
  expect_error(
      "small input",
      [](auto& d) {
        static collage_tensor_desc_t args[8];
        static const int64_t shape[4] = {1, 3, 7, 8};
        for (int i = 0; i < d.num_args && i < 8; ++i) args[i] = d.args[i];
        args[0].shape = shape;
        d.args = args;
      },
      "smaller");
  expect_error(
      "null", [](auto& d) { d.params = nullptr; }, "params");
}

TEST_CASE("dnnl module: corrupted parameters never crash", "[dnnl][module]") {
  const collage_rt_module_v1_t* m = rt_dnnl::module_table();
  auto b = build_conv_group();
  const KernelRecord& record = b->kernel->record();
  KernelDesc d(record, b->sub.graph);
  const std::vector<uint8_t> good = record.params;
  std::vector<uint8_t> bytes;
  // Every truncation.
  for (size_t n = 0; n < good.size(); ++n) {
    bytes.assign(good.begin(), good.begin() + n);
    d.desc().params = bytes.data();
    d.desc().params_size = bytes.size();
    INFO("truncated to " << n << " bytes");
    CHECK_FALSE(try_create(m, d.desc()).empty());
  }
  // Trailing garbage.
  bytes = good;
  bytes.push_back(0);
  d.desc().params = bytes.data();
  d.desc().params_size = bytes.size();
  CHECK_THAT(try_create(m, d.desc()), Catch::Contains("trailing"));
  // Random corruptions of one to four bytes; accepted ones must also run safely.
  std::mt19937 rng(42);
  int accepted = 0;
  for (int iter = 0; iter < 400; ++iter) {
    bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t at = rng() % bytes.size();
      bytes[at] = rng() % 3 == 0 ? static_cast<uint8_t>(rng()) : bytes[at] ^ (1u << (rng() % 8));
    }
    d.desc().params = bytes.data();
    d.desc().params_size = bytes.size();
    if (try_create(m, d.desc(), b.get()).empty()) ++accepted;
  }
  WARN(accepted << " of 400 corrupted parameter sets were still valid kernels");
}

TEST_CASE("dnnl module: one kernel on many threads at once", "[dnnl][module]") {
  auto b = build_conv_group();
  const Tensor expected = run_kernel(*b->kernel, *b);
  // More threads than the kernel has scratch slots, so some calls use scratch of their own.
  constexpr int kThreads = 12;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int r = 0; r < 20; ++r) {
        Tensor out(DType::f32, expected.shape());
        std::vector<void*> args;
        for (const Tensor& in : b->inputs) args.push_back(const_cast<void*>(in.raw()));
        args.push_back(out.raw());
        if (!b->kernel->run_task(args.data(), 0).ok() || !out.identical(expected)) ++mismatches[i];
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) CHECK(mismatches[i] == 0);
}

TEST_CASE("dnnl module: OpenMP threads are set for the run and restored", "[dnnl][module]") {
  BuildOptions options;
  options.num_threads = 1;
  auto b = build_conv_group(options);
  const int before = omp_get_max_threads();
  const Tensor one_thread = run_kernel(*b->kernel, *b);
  CHECK(omp_get_max_threads() == before);
  auto all = build_conv_group();
  CHECK_THAT(one_thread, Catch::Predicate<Tensor>([&](const Tensor& t) {
               return max_relative_error(t, run_kernel(*all->kernel, *all)) <= 1e-5;
             }));
}
