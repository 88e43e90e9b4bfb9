// An OpenVINO region in a wave schedule is a team kernel: alone with every worker (exclusive) or
// limited to fewer threads by the schedule (pinned), never an ordinary chunk beside other work
// with its whole oneTBB team (two pools on the same cores), whatever its compile-time profile.
#include <catch2/catch.hpp>

#include "artifact/artifact.h"
#include "collage/backends/eigen.h"
#include "collage/backends/openvino.h"
#include "collage/ops.h"
#include "collage/subgraph.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"
#include "core/str_cat.h"

using namespace collage;
using namespace collage::testing;

namespace {

// x f32[1x16x20x20]; branch A: two 3x3 convolutions with Relu (one openvino region); branch B:
// one 3x3 convolution with Relu (eigen); their sum (eigen). Two waves: {A, B}, then the sum.
struct TwoBranches {
  Context ctx;
  Graph g;
  BackendRegistry backends;
  Placement placement;

  TwoBranches() {
    GraphBuilder b(ctx, "two_branches");
    ValueId x = b.add_input("x", {DType::f32, {1, 16, 20, 20}});
    auto branch = [&](int count, uint32_t seed) {
      ValueId v = x;
      for (int i = 0; i < count; ++i) {
        ValueId w = b.add_constant(str_cat("w", seed + i),
                                   random_f32({16, 16, 3, 3}, seed + i));
        auto conv = b.add_node("Conv", {v, w}, make_attrs<ConvAttrs>([](auto& a) {
                                 a.pads = {1, 1, 1, 1};
                               }));
        v = (*b.add_node("Relu", {(*conv)[0]}))[0];
      }
      return v;
    };
    ValueId a = branch(2, 1);
    ValueId c = branch(1, 11);
    b.add_output((*b.add_node("Add", {a, c}))[0]);
    auto done = b.finish();
    REQUIRE(done.ok());
    g = *std::move(done);
    REQUIRE(g.nodes().size() == 7);
    REQUIRE(register_openvino_backend(backends).ok());
    REQUIRE(register_eigen_backend(backends).ok());
    const size_t n = g.nodes().size();
    placement.strategy = "openvino + eigen";
    placement.groups.push_back({NodeSet::of(n, {0, 1, 2, 3}), "openvino", "manual", -1, {}});
    placement.groups.push_back({NodeSet::of(n, {4, 5}), "eigen", "manual", -1, {}});
    placement.groups.push_back({NodeSet::of(n, {6}), "eigen", "manual", -1, {}});
  }

  // The artifact with a wave schedule whose team kernels are treated as `teams` says.
  std::string compile(waves::SchedulerOptions::Teams teams, ArtifactSummary* summary) const {
    ArtifactOptions o;
    o.build.num_threads = 2;
    o.waves.executor = waves::ExecutorChoice::waves;
    o.waves.workers = 2;
    o.waves.scheduler.teams = teams;
    o.waves.measure_runs = 3;
    auto bytes = compile_artifact(ctx, backends, g, placement, o, summary);
    INFO(bytes.status().ToString());
    REQUIRE(bytes.ok());
    return *std::move(bytes);
  }
};

std::vector<Tensor> run_artifact(const std::string& bytes, uint32_t flags,
                                 const std::vector<Tensor>& feed) {
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.flags = flags;
  options.num_threads = 2;
  collage_module_t* m = nullptr;
  collage_status_t* s = collage_module_load_memory(bytes.data(), bytes.size(), &options, &m);
  INFO(take_message(s));
  REQUIRE(m);
  ModulePtr module(m);
  return run_module(module.get(), feed);
}

}  // namespace

TEST_CASE("openvino waves: the region is exclusive or pinned by default, every time",
          "[openvino][waves]") {
  TwoBranches t;
  const std::vector<Tensor> feed = {random_f32({1, 16, 20, 20}, 7)};
  std::vector<Tensor> sequential;
  // The profile is taken anew for each artifact (on a loaded machine it differs from one to the
  // next); the region's treatment must not depend on it.
  for (int i = 0; i < 3; ++i) {
    ArtifactSummary summary;
    const std::string bytes = t.compile(waves::SchedulerOptions::Teams::profiled, &summary);
    REQUIRE(summary.kernels == 3);
    REQUIRE(summary.num_waves == 2);
    INFO("artifact " << i << ": " << summary.exclusive_kernels << " exclusive, "
                     << summary.pinned_kernels << " pinned");
    // The region is the only kernel with a thread team of its own (eigen's run on the pool).
    CHECK(summary.exclusive_kernels + summary.pinned_kernels == 1);
    const std::vector<Tensor> waves = run_artifact(bytes, COLLAGE_LOAD_EXECUTOR_WAVES, feed);
    if (sequential.empty())
      sequential = run_artifact(bytes, COLLAGE_LOAD_EXECUTOR_SEQUENTIAL, feed);
    REQUIRE(waves.size() == 1);
    CHECK(max_scaled_error(waves[0], sequential[0]) <= 1e-5);
  }
}

TEST_CASE("openvino waves: only the measuring option `shared` runs the region beside others",
          "[openvino][waves]") {
  TwoBranches t;
  ArtifactSummary summary;
  t.compile(waves::SchedulerOptions::Teams::shared, &summary);
  CHECK(summary.exclusive_kernels == 0);
  CHECK(summary.pinned_kernels == 0);
  t.compile(waves::SchedulerOptions::Teams::pinned, &summary);
  CHECK(summary.exclusive_kernels == 0);
  CHECK(summary.pinned_kernels == 1);
  t.compile(waves::SchedulerOptions::Teams::exclusive, &summary);
  CHECK(summary.exclusive_kernels == 1);
  CHECK(summary.pinned_kernels == 0);
}
