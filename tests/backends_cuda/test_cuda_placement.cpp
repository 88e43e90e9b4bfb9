// The cuda backend taking part in a placement on a GPU ([gpu]): a CNN placed over the cuda and
// native backends (op-level and two-level, measured), built and run, against the reference
// executor and the same model placed on the CPU alone. Without a usable device the case says why
// and skips.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <tuple>

#include "collage/backends/cuda.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/nn.h"
#include "collage/placement.h"
#include "collage/reference.h"
#include "common/backend_check.h"

namespace collage {
namespace {

using testing::TestGraph;

// x [1, 3, size, size] -> Conv 3->c 3x3 stride `stride` + bias -> Relu -> depthwise 3x3 ->
// Relu -> Conv 1x1 c->2c -> Relu -> GlobalAveragePool -> Flatten -> Gemm 2c->10 -> Softmax (a node
// only the CPU runs).
Graph cnn(TestGraph& t, int64_t size, int64_t c, int64_t stride) {
  auto conv = [](std::vector<int64_t> pads, std::vector<int64_t> strides, int64_t group) {
    return make_attrs<ConvAttrs>([&](auto& a) {
      a.pads = pads;
      a.strides = strides;
      a.group = group;
    });
  };
  ValueId x = t.input({1, 3, size, size});
  ValueId y = t.op("Conv", {x, t.constant({c, 3, 3, 3}), t.constant({c})},
                   conv({1, 1, 1, 1}, {stride, stride}, 1));
  y = t.op("Relu", {y});
  y = t.op("Relu", {t.op("Conv", {y, t.constant({c, 1, 3, 3})}, conv({1, 1, 1, 1}, {1, 1}, c))});
  y = t.op("Relu", {t.op("Conv", {y, t.constant({2 * c, c, 1, 1})}, conv({}, {1, 1}, 1))});
  y = t.op("Flatten", {t.op("GlobalAveragePool", {y})});
  y = t.op("Gemm", {y, t.constant({2 * c, 10}), t.constant({10})});
  return t.finish(t.op("Softmax", {y}));
}

double median_ms(const CompiledModel& m, const std::vector<Tensor>& inputs) {
  std::vector<double> ms;
  for (int i = 0; i < 25; ++i) {
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(m.run(inputs).ok());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

TEST_CASE("cuda: a CNN placed over the cuda and native backends matches the reference",
          "[cuda_backend][gpu]") {
  absl::StatusOr<std::unique_ptr<Backend>> cuda = make_cuda_backend();
  if (!cuda.ok()) {
    WARN("SKIPPED (no usable CUDA device): " << cuda.status().message());
    return;
  }
  BackendRegistry registry;
  REQUIRE(registry.add(std::move(*cuda)).ok());
  REQUIRE(registry.add(make_native_backend()).ok());
  REQUIRE(registry.add(make_reference_backend()).ok());
  // A small input, where the CPU wins, and a larger one, where the GPU should.
  for (const auto& [size, c, stride] : {std::tuple{64, 32, 2}, std::tuple{224, 64, 2}}) {
    TestGraph t;
    const Graph g = cnn(t, size, c, stride);
    const std::vector<Tensor> inputs = t.feed(g);
    absl::StatusOr<std::vector<Tensor>> want = run_reference(g, inputs);
    REQUIRE(want.ok());
    for (const char* strategy : {"single:native", "op-level", "two-level"}) {
      PlacementOptions options;
      options.strategy = strategy;
      options.fallback = "native";
      options.time_budget_s = 30;
      absl::StatusOr<Placement> placement = optimize(t.context(), registry, g, options);
      INFO(strategy << ": " << (placement.ok() ? "" : std::string(placement.status().message())));
      REQUIRE(placement.ok());
      std::string groups;
      for (const PlacedGroup& p : placement->groups)
        groups += p.backend + "{" + std::to_string(p.nodes.count()) + "} ";
      absl::StatusOr<CompiledModel> model = compile_placement(t.context(), registry, g, *placement);
      INFO(groups << (model.ok() ? "" : std::string(model.status().message())));
      REQUIRE(model.ok());
      absl::StatusOr<std::vector<Tensor>> got = model->run(inputs);
      REQUIRE(got.ok());
      const float* a = got->at(0).data<float>();
      const float* b = want->at(0).data<float>();
      double worst = 0;
      for (size_t i = 0; i < 10; ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
      CHECK(worst < 1e-5);
      WARN(size << "x" << size << ", " << c << " channels, " << strategy << ": " << groups
                << "median " << median_ms(*model, inputs) << " ms per run");
    }
  }
}

}  // namespace
}  // namespace collage
