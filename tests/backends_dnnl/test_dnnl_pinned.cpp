// dnnl kernels pinned to fewer OpenMP threads (the wave executor's pinned variant): the same
// output as the kernel's own team, from many threads at once, the caller's thread count restored,
// prepared through the module's table, a limit below one refused, and an old-sized table read
// as having no thread functions.
#include <omp.h>

#include <catch2/catch.hpp>
#include <thread>

#include "collage/backends/dnnl.h"
#include "collage/ops.h"
#include "collage/subgraph.h"
#include "dnnl_module.h"
#include "dnnl_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Conv 3x3 (8 -> 32 channels) + Relu, built by the dnnl backend.
struct Pinned {
  TestGraph t;
  Graph g;
  ExtractedSubgraph sub;
  std::unique_ptr<Kernel> kernel;
  std::vector<Tensor> inputs;

  Pinned() {
    ValueId v = t.op("Conv", {t.input({1, 8, 14, 14}), t.constant({32, 8, 3, 3})},
                     make_attrs<ConvAttrs>([](auto& a) {
                       a.pads = {1, 1, 1, 1};
                     }));
    g = t.finish(t.op("Relu", {v}));
    NodeSet all(g.nodes().size());
    for (size_t n = 0; n < g.nodes().size(); ++n) all.insert(static_cast<NodeId>(n));
    auto s = extract_subgraph(t.context(), g, all);
    REQUIRE(s.ok());
    sub = *std::move(s);
    auto k = make_dnnl_backend()->build(sub.graph, {});
    INFO(k.status().ToString());
    REQUIRE(k.ok());
    kernel = *std::move(k);
    inputs = t.feed(g);
  }

  // Runs the kernel with at most `threads` threads of its team (0: its own team).
  absl::StatusOr<Tensor> run(int32_t threads) {
    Tensor out(DType::f32, g.value(g.outputs()[0]).type.shape);
    std::vector<void*> args;
    for (const Tensor& in : inputs) args.push_back(const_cast<void*>(in.raw()));
    args.push_back(out.raw());
    absl::Status s = threads ? kernel->run_task_threads(args.data(), 0, threads)
                             : kernel->run_task(args.data(), 0);
    if (!s.ok()) return s;
    return out;
  }
};

}  // namespace

TEST_CASE("dnnl pinned: one thread gives the team's output and restores the caller's count",
          "[dnnl][pinned]") {
  Pinned p;
  CHECK(p.kernel->has_thread_team());
  auto team = p.run(0);
  REQUIRE(team.ok());
  const int before = omp_get_max_threads();
  auto pinned = p.run(1);
  REQUIRE(pinned.ok());
  CHECK(omp_get_max_threads() == before);
  CHECK(pinned->identical(*team));
  // As many threads as the team has, or more: the kernel itself.
  auto wide = p.run(before + 3);
  REQUIRE(wide.ok());
  CHECK(wide->identical(*team));
}

TEST_CASE("dnnl pinned: many threads run the pinned kernel at once", "[dnnl][pinned]") {
  Pinned p;
  auto team = p.run(0);
  REQUIRE(team.ok());
  constexpr int kThreads = 6;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int r = 0; r < 10; ++r) {
        auto out = p.run(1);
        if (!out.ok() || !out->identical(*team)) ++mismatches[i];
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) CHECK(mismatches[i] == 0);
}

TEST_CASE("dnnl pinned: the module table prepares and runs a limit, refuses one below 1",
          "[dnnl][pinned]") {
  const collage_rt_module_v1_t* m = rt_dnnl::module_table();
  REQUIRE(COLLAGE_RT_MODULE_HAS(m, kernel_run_threads));
  REQUIRE(COLLAGE_RT_MODULE_HAS(m, kernel_prepare_threads));
  Pinned p;
  KernelDesc d(p.kernel->record(), p.sub.graph);
  void* instance = nullptr;
  char err[256] = {0};
  REQUIRE(m->kernel_create(&d.desc(), &instance, err, sizeof err) == 0);
  CHECK(m->kernel_prepare_threads(instance, 1, err, sizeof err) == 0);
  auto team = p.run(0);
  REQUIRE(team.ok());
  Tensor out(DType::f32, team->shape());
  std::vector<void*> args;
  for (const Tensor& in : p.inputs) args.push_back(const_cast<void*>(in.raw()));
  args.push_back(out.raw());
  CHECK(m->kernel_run_threads(instance, args.data(), 0, 1, 1, err, sizeof err) == 0);
  CHECK(out.identical(*team));
  CHECK(m->kernel_run_threads(instance, args.data(), 0, 1, 0, err, sizeof err) != 0);
  CHECK_THAT(std::string(err), Catch::Contains("cannot run on 0 threads"));
  CHECK(m->kernel_prepare_threads(instance, -2, err, sizeof err) != 0);
  CHECK_THAT(std::string(err), Catch::Contains("cannot run on -2 threads"));
  m->kernel_destroy(instance);
}

TEST_CASE("dnnl pinned: a table of the first version's size has no thread functions",
          "[dnnl][pinned]") {
  // A module built before the functions were appended: its struct_size ends before them, and
  // whatever lies beyond is not read.
  collage_rt_module_v1_t old = *rt_dnnl::module_table();
  CHECK(COLLAGE_RT_MODULE_HAS(&old, kernel_run_threads));
  old.struct_size = COLLAGE_RT_MODULE_V1_BASE_SIZE;
  CHECK_FALSE(COLLAGE_RT_MODULE_HAS(&old, kernel_run_threads));
  CHECK_FALSE(COLLAGE_RT_MODULE_HAS(&old, kernel_prepare_threads));
  old.struct_size = sizeof old;
  old.kernel_prepare_threads = nullptr;
  CHECK(COLLAGE_RT_MODULE_HAS(&old, kernel_run_threads));
  CHECK_FALSE(COLLAGE_RT_MODULE_HAS(&old, kernel_prepare_threads));
}
