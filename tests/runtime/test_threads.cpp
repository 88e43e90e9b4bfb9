// One loaded module run from 8 threads at once, 200 runs each, gives exactly the outputs of a
// single-threaded run.
#include <catch2/catch.hpp>
#include <thread>

#include "common/test_util.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("threads: 8 threads x 200 runs match a single-threaded run", "[runtime][threads]") {
  Context ctx;
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.num_threads = 3;  // kernels spread their tasks too, over a pool the runs share
  ModulePtr m =
      load_bytes(backend_artifact(multi_output_graph(ctx), "eigen"), &options, nullptr, nullptr);
  REQUIRE(m);
  constexpr int kThreads = 8, kRuns = 200;
  std::vector<Tensor> inputs;
  std::vector<std::vector<Tensor>> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(random_f32({4, 16}, 100 + t));
    expected.push_back(run_module(m.get(), {inputs.back()}));
    REQUIRE(expected.back().size() == 5);
  }
  std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        // Alternate inputs between threads so that neighbouring runs differ.
        const int which = (t + r) % kThreads;
        int32_t code = 0;
        std::vector<Tensor> out = run_module(m.get(), {inputs[which]}, &code);
        if (code != COLLAGE_STATUS_OK || out.size() != 5) {
          ++failures[t];
          continue;
        }
        for (size_t i = 0; i < out.size(); ++i)
          if (!out[i].identical(expected[which][i])) ++mismatches[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(failures[t] == 0);
    CHECK(mismatches[t] == 0);
  }
}
