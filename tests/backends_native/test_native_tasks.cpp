// Task splits of native kernels: native_task_count's guarantees (no empty task, the sequential
// executor's per-thread chunks as balanced as one task per thread, finer splits where the loop
// allows), identical results for every task count in process, and artifacts whose kernels have
// more tasks than the runtime has threads.
#include <catch2/catch.hpp>
#include <set>

#include "artifact/artifact.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "collage/runtime.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"
#include "placement/baselines.h"

using namespace collage;
using namespace collage::testing;

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Iterations of task `task` of `tasks` in the generated code's split of `extent` iterations.
int64_t task_iterations(int64_t extent, int64_t tasks, int64_t task) {
  const int64_t per = ceil_div(extent, tasks);
  return std::max<int64_t>(0, std::min((task + 1) * per, extent) - std::min(task * per, extent));
}

// Conv (8 -> 16 channels, 3x3, padded) + Relu on 1x8x14x14.
Graph conv_relu_graph(const Context& ctx) {
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {1, 8, 14, 14}});
  ValueId w = b.add_constant("w", random_f32({16, 8, 3, 3}, 5));
  auto c = b.add("Conv", {x, w},
                 make_attrs<ConvAttrs>([](ConvAttrs& a) { a.pads = {1, 1, 1, 1}; }));
  REQUIRE(c.ok());
  b.add_output(*b.add("Relu", {*c}));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

}  // namespace

TEST_CASE("native tasks: no empty task, balanced per-thread chunks, finer where possible",
          "[native]") {
  CHECK(native_task_count(0, 4, 8) == 1);
  for (int threads = 1; threads <= 6; ++threads)
    for (int per_thread = 1; per_thread <= 8; ++per_thread)
      for (int64_t extent = 1; extent <= 300; ++extent) {
        const int64_t n = native_task_count(extent, threads, per_thread);
        INFO("extent " << extent << ", " << threads << " threads, " << per_thread
                       << " tasks per thread: " << n << " tasks");
        const int64_t groups = std::min<int64_t>(extent, threads);
        // One task per thread, without the ones the split leaves empty (4 over 3: 2, 2, 0).
        const int64_t one_per_thread = ceil_div(extent, ceil_div(extent, groups));
        REQUIRE(n >= one_per_thread);
        REQUIRE(n <= std::min<int64_t>(extent, groups * per_thread));
        if (per_thread == 1) CHECK(n == one_per_thread);
        for (int64_t t = 0; t < n; ++t) REQUIRE(task_iterations(extent, n, t) > 0);
        // The sequential executor runs tasks [n*g/groups, n*(g+1)/groups) on thread g.
        int64_t largest = 0;
        for (int64_t g = 0; g < groups; ++g) {
          int64_t sum = 0;
          for (int64_t t = n * g / groups; t < n * (g + 1) / groups; ++t)
            sum += task_iterations(extent, n, t);
          largest = std::max(largest, sum);
        }
        CHECK(largest <= ceil_div(extent, groups));
      }
  // Finer splits: every multiple of the thread count up to the cap when the loop divides evenly.
  CHECK(native_task_count(64, 2, 8) == 16);
  CHECK(native_task_count(14, 2, 8) == 14);
  CHECK(native_task_count(2048, 4, 8) == 32);
  CHECK(native_task_count(64, 2, 1) == 2);
}

TEST_CASE("native tasks: a kernel computes the same bits for every task count", "[native]") {
  Context ctx;
  Graph g = conv_relu_graph(ctx);
  Tensor x = random_f32({1, 8, 14, 14}, 9);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  // Each kernel, the direct one and the Winograd one (which `measure` picks per build, by timing).
  for (NativeWinograd mode : {NativeWinograd::off, NativeWinograd::always}) {
    std::optional<Tensor> first;
    std::set<int32_t> counts;
    for (int threads = 1; threads <= 4; ++threads)
      for (int per_thread : {1, 2, 3, 8}) {
        NativeBackendOptions o;
        o.max_tasks_per_thread = per_thread;
        o.winograd = mode;
        auto backend = make_native_backend(o);
        BuildOptions bo;
        bo.num_threads = threads;
        auto kernel = backend->build(g, bo);
        INFO(kernel.status().ToString());
        REQUIRE(kernel.ok());
        const int32_t n = (*kernel)->task_count();
        INFO(threads << " threads, " << per_thread << " tasks per thread: " << n << " tasks");
        counts.insert(n);
        // Tasks write disjoint parts of the output: any order gives the same result.
        Tensor out(DType::f32, {1, 16, 14, 14});
        void* args[] = {x.raw(), out.raw()};
        for (int32_t t = n - 1; t >= 0; --t) REQUIRE((*kernel)->run_task(args, t).ok());
        CHECK(max_scaled_error(out, (*expected)[0]) <= 1e-5);
        if (!first)
          first = out;
        else
          CHECK(out.identical(*first));
      }
    if (mode == NativeWinograd::off) {  // the direct kernel's rows split finer than 4 tile rows
      CHECK(counts.size() >= 4);
      CHECK(*counts.rbegin() > 4);
    }
  }
}

TEST_CASE("native tasks: the runtime's executors group more tasks than threads", "[native]") {
  Context ctx;
  Graph g = conv_relu_graph(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  NativeBackendOptions no;
  no.max_tasks_per_thread = 8;
  REQUIRE(backends.add(make_native_backend(no)).ok());
  auto placement = place_baseline("single:native", g, backends);
  REQUIRE(placement.ok());
  ArtifactOptions options;
  options.build.num_threads = 4;
  options.waves.executor = waves::ExecutorChoice::waves;
  options.waves.workers = 3;
  auto bytes = compile_artifact(ctx, backends, g, *placement, options);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  Tensor x = random_f32({1, 8, 14, 14}, 9);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  std::optional<Tensor> first;
  for (uint32_t executor : {COLLAGE_LOAD_EXECUTOR_SEQUENTIAL, COLLAGE_LOAD_EXECUTOR_WAVES})
    for (int threads : {1, 2, 3}) {
      INFO("executor flag " << executor << ", " << threads << " threads");
      collage_load_options_t lo;
      collage_load_options_init(&lo);
      lo.num_threads = threads;
      lo.flags = executor;
      collage_module_t* m = nullptr;
      collage_status_t* s = collage_module_load_memory(bytes->data(), bytes->size(), &lo, &m);
      INFO((s ? collage_status_message(s) : ""));
      collage_status_free(s);
      REQUIRE(m);
      Tensor out(DType::f32, {1, 16, 14, 14});
      DLTensor in_view = dl_view(x), out_view = dl_view(out);
      s = collage_module_run(m, &in_view, 1, &out_view, 1);
      INFO((s ? collage_status_message(s) : ""));
      CHECK(s == nullptr);
      collage_status_free(s);
      collage_module_release(m);
      CHECK(max_scaled_error(out, (*expected)[0]) <= 1e-5);
      if (!first)
        first = out;
      else
        CHECK(out.identical(*first));
    }
}
