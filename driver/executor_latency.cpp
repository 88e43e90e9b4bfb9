// artifact_executor_latency: a placement scored as its artifact's executor runs it, for the
// graph-level search (PlacementOptions::executor_latency).
#include <algorithm>

#include "artifact/artifact.h"
#include "collage/compiler.h"
#include "collage/executor.h"

namespace collage {
namespace {

// Scoring throws the artifact's bytes away: only its wave schedule, profiled and measured on the
// live kernels in process (native ones run their JIT-compiled code), is wanted. So native code is
// not linked (a linker run per placement scored): this marker takes the place of the shared
// object the artifact would embed. Without it, every placement with a generated kernel would be
// scored sequentially, against wave-scored library placements.
constexpr char kUnlinkedNativeCode[] = "native code not linked: the artifact is only scored";

}  // namespace

ExecutorLatency artifact_executor_latency(const Context& ctx, int runs, double max_ms) {
  return [&ctx, runs, max_ms](const BackendRegistry& backends, const Graph& g, const Placement& p,
                              const BuildOptions& build,
                              PlacementExecutor executor) -> std::optional<double> {
    for (const PlacedGroup& group : p.groups)
      if (group.backend == kReferenceBackend) return std::nullopt;  // no runtime form
    auto kernels = build_artifact_kernels(ctx, backends, g, p, build);
    if (!kernels.ok()) return std::nullopt;
    ArtifactOptions options;
    options.build = build;
    options.waves.executor = executor == PlacementExecutor::waves ? waves::ExecutorChoice::waves
                                                                  : waves::ExecutorChoice::automatic;
    options.waves.workers = static_cast<uint32_t>(build.num_threads);
    options.waves.profile_repeats = 2;
    options.waves.measure_runs = runs;
    options.waves.measure_max_ms = max_ms;
    options.native_library = kUnlinkedNativeCode;
    ArtifactSummary summary;
    if (!serialize_artifact(g, *kernels, options, &summary).ok() || summary.waves_ms <= 0)
      return std::nullopt;
    return executor == PlacementExecutor::waves ? summary.waves_ms
                                                : std::min(summary.waves_ms, summary.sequential_ms);
  };
}

}  // namespace collage
