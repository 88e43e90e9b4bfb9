// The graph-level search scored under the executor the placement will run with prefers two
// smaller kernels side by side over one faster alone: on a two-branch graph where a 2-thread team
// kernel beats a single-threaded one alone (2.8 ms against 4 ms on 2 simulated cores), the search
// scored sequentially puts both branches on the team kernels (5.6 ms against 8 ms), and scored
// under the wave executor on the single-threaded kernels, which then run side by side (4 ms
// against 5.6 ms: the team kernels take both cores, so they still run one after another). And a
// placement of generated kernels is wave-scored too.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "collage/backends/native.h"
#include "collage/compiler.h"
#include "collage/placement.h"
#include "placement/baselines.h"
#include "placement/end_to_end.h"
#include "side_by_side/simulated_backends.h"

using namespace collage;
using collage::testing::SimulatedCores;

namespace {

constexpr double kTeamMs = 2.8, kSoloMs = 4.0;

// The backend of each node of `g` in `p`, by node.
std::vector<std::string> backend_of_nodes(const Graph& g, const Placement& p) {
  std::vector<std::string> out(g.nodes().size());
  for (const PlacedGroup& group : p.groups)
    for (NodeId n : group.nodes.to_vector()) out[static_cast<size_t>(n)] = group.backend;
  return out;
}

}  // namespace

TEST_CASE("waves: scored under the wave executor, the search runs two smaller kernels side by side",
          "[waves][placement][side_by_side]") {
  Context ctx;
  SimulatedCores cores(2);
  BackendRegistry backends;
  REQUIRE(backends.add(testing::make_simulated_backend({"team", 2, kTeamMs}, &cores)).ok());
  REQUIRE(backends.add(testing::make_simulated_backend({"solo", 1, kSoloMs}, &cores)).ok());
  const Graph g = testing::two_branch_graph(ctx);

  auto search = [&](PlacementExecutor executor) {
    PlacementOptions options;
    options.strategy = "two-level";
    options.fallback = "solo";
    options.executor = executor;
    options.executor_latency = artifact_executor_latency(ctx);
    options.num_threads = 2;  // the simulated machine's cores: the wave executor's workers
    options.population = 6;
    options.time_budget_s = 20;
    options.seed = 1;
    auto result = optimize_detailed(ctx, backends, g, options);
    REQUIRE(result.ok());
    for (const std::string& note : result->placement.notes) UNSCOPED_INFO(note);
    return backend_of_nodes(g, result->placement);
  };

  const std::vector<std::string> team = {"team", "team"}, solo = {"solo", "solo"};
  const std::vector<std::string> sequential = search(PlacementExecutor::sequential);
  CHECK(sequential == team);
  const std::vector<std::string> waves = search(PlacementExecutor::waves);
  CHECK(waves == solo);
}

// Generated kernels need linked code in a real artifact; scoring only measures the live kernels,
// so a placement of them is wave-scored like a library placement, not measured sequentially.
TEST_CASE("waves: a placement of generated kernels is scored under the wave executor",
          "[waves][placement][side_by_side]") {
  Context ctx;
  const Graph g = testing::two_branch_graph(ctx);
  BackendRegistry backends;
  REQUIRE(register_native_backend(backends).ok());
  ThreadPool pool(2);
  EndToEndOptions options;
  options.executor = PlacementExecutor::waves;
  options.executor_latency = artifact_executor_latency(ctx, /*runs=*/3);
  EndToEndMeasurer measurer(ctx, backends, g, &pool, options);
  BaselineOptions baseline;
  baseline.fallback = "native";
  auto on_native = place_single(g, backends, "native", baseline);
  REQUIRE(on_native.ok());
  auto ms = measurer.latency_ms(*on_native);
  REQUIRE(ms.ok());
  CHECK(*ms > 0);
  CHECK(measurer.wave_scored() == 1);
  CHECK(measurer.sequential_scored() == 0);
}
