// The kernel shelf (collage/kernel_shelf.h) with the openvino backend: a region the measurer
// compiled is taken by the artifact build instead of being compiled again; a region with other
// weights is not mistaken for it; past its bound the shelf lets the oldest go.
#include <catch2/catch.hpp>

#include "artifact/artifact.h"
#include "collage/backends/openvino.h"
#include "collage/executor.h"
#include "collage/kernel_shelf.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "collage/subgraph.h"
#include "collage/thread_pool.h"
#include "common/test_util.h"
#include "openvino_test_graphs.h"
#include "placement/baselines.h"
#include "placement/measurer.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("openvino shelf: a region measured once is not compiled again by the build",
          "[openvino][shelf]") {
  Context ctx;
  const Graph g = conv_relu(ctx, 3);
  BackendRegistry backends;
  add_reference_and_openvino(backends);
  const Placement placement = one_openvino_region(g, backends);
  auto group = extract_subgraph(ctx, g, placement.groups[0].nodes);
  REQUIRE(group.ok());

  KernelShelf shelf;
  ThreadPool pool(2);
  MeasureOptions measure;
  measure.shelf = &shelf;
  Measurer measurer(measure, nullptr, "test-device", &pool);
  const Candidate candidate{placement.groups[0].nodes, backends.find(kOpenvinoBackend), "test"};
  auto cost = measurer.cost(candidate, *group);
  INFO(cost.status().ToString());
  REQUIRE(cost.ok());
  CHECK(cost->samples > 0);
  CHECK(measurer.built(candidate));
  CHECK(shelf.built() == 1);
  CHECK(shelf.reused() == 0);

  // The artifact build takes the measured region: nothing compiled, one reuse; its record is
  // whole (IR, weights, OpenVINO's export) and the kernel computes what the reference does.
  BuildOptions build;
  build.num_threads = 2;
  build.shelf = &shelf;
  auto kernels = build_artifact_kernels(ctx, backends, g, placement, build);
  INFO(kernels.status().ToString());
  REQUIRE(kernels.ok());
  CHECK(shelf.built() == 1);
  CHECK(shelf.reused() == 1);
  CHECK((*kernels)[0].record.module == "openvino");
  CHECK((*kernels)[0].record.constants.size() == 3);
  const std::vector<Tensor> feed = {random_f32({1, 4, 6, 6}, 9)};
  auto expected = run_reference(g, feed);
  REQUIRE(expected.ok());
  Tensor y(DType::f32, {1, 8, 6, 6});
  void* args[] = {const_cast<void*>(feed[0].raw()), y.raw()};
  REQUIRE((*kernels)[0].kernel->run_task(args, 0).ok());
  CHECK(max_scaled_error(y, (*expected)[0]) <= 1e-5);

  // The same structure with other weights is another region: compiled, not taken.
  const Graph other = conv_relu(ctx, 4);
  auto other_kernels = build_artifact_kernels(ctx, backends, other, placement, build);
  REQUIRE(other_kernels.ok());
  CHECK(shelf.built() == 2);
  CHECK(shelf.reused() == 1);
  auto other_expected = run_reference(other, feed);
  REQUIRE(other_expected.ok());
  REQUIRE((*other_kernels)[0].kernel->run_task(args, 0).ok());
  CHECK(max_scaled_error(y, (*other_expected)[0]) <= 1e-5);
}

TEST_CASE("kernel shelf: past its bound the oldest kernels are let go", "[shelf]") {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(register_openvino_backend(backends).ok());
  const Graph g = conv_relu(ctx, 3);
  BuildOptions build;
  build.num_threads = 1;
  auto a = backends.find(kOpenvinoBackend)->build(g, build);
  auto b = backends.find(kOpenvinoBackend)->build(conv_relu(ctx, 4), build);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  KernelShelf shelf(/*max_bytes=*/100);
  shelf.keep("openvino", 1, std::shared_ptr<Kernel>(*std::move(a)), 60);
  REQUIRE(shelf.take("openvino", 1) != nullptr);
  CHECK(shelf.take("openvino", 2) == nullptr);
  CHECK(shelf.take("native", 1) == nullptr);
  CHECK(shelf.let_go("openvino") == 0);
  shelf.keep("openvino", 2, std::shared_ptr<Kernel>(*std::move(b)), 60);
  CHECK(shelf.take("openvino", 1) == nullptr);  // 120 bytes > 100: the first went
  CHECK(shelf.take("openvino", 2) != nullptr);
  CHECK(shelf.built() == 2);
  CHECK(shelf.reused() == 2);
  // Counted by backend: the placement's build prediction no longer takes openvino's measured
  // regions as kept.
  CHECK(shelf.let_go("openvino") == 1);
  CHECK(shelf.let_go("native") == 0);
  // A kernel larger than the bound is kept alone, never let go as it is kept (GPT-2's whole-model
  // region was compiled again by each of its users).
  auto c = backends.find(kOpenvinoBackend)->build(conv_relu(ctx, 5), build);
  REQUIRE(c.ok());
  shelf.keep("openvino", 3, std::shared_ptr<Kernel>(*std::move(c)), 250);
  CHECK(shelf.take("openvino", 2) == nullptr);
  CHECK(shelf.take("openvino", 3) != nullptr);
  CHECK(shelf.let_go("openvino") == 2);
}
