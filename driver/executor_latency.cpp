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
    // Native kernels built on the pool's threads, unless builds time choices (a Winograd one),
    // which must run alone (GoogLeNet's single:native seed, 181 kernels the measurer's cut left
    // unbuilt: 18 s on one thread).
    const int threads = build.measure_choices ? 1 : std::max(1, build.num_threads);
    auto kernels = build_artifact_kernels(ctx, backends, g, p, build, threads, /*records=*/false);
    if (!kernels.ok()) return std::nullopt;
    ArtifactOptions options;
    options.build = build;
    options.waves.executor = executor == PlacementExecutor::waves ? waves::ExecutorChoice::waves
                                                                  : waves::ExecutorChoice::automatic;
    options.waves.workers = static_cast<uint32_t>(build.num_threads);
    options.waves.profile_repeats = 2;
    options.waves.measure_runs = runs;
    // Fewer runs than an artifact's own choice takes (5 of each after 2 untimed): an evaluation
    // of ViT-B/16 (0.35 s a run) took 12 s of runs, most of the graph-level step; the finalists
    // are measured again anyway.
    options.waves.measure_min_runs = 3;
    options.waves.measure_warmup = 1;
    options.waves.measure_max_ms = max_ms;
    options.native_library = kUnlinkedNativeCode;
    // The image, not its bytes: putting a transformer's 400 MiB of constants together took
    // seconds per placement scored (BERT-base's graph-level step, 2026-11-27).
    ArtifactSummary summary;
    if (!serialize_artifact_image(g, *kernels, options, &summary).ok() || summary.waves_ms <= 0)
      return std::nullopt;
    return executor == PlacementExecutor::waves ? summary.waves_ms
                                                : std::min(summary.waves_ms, summary.sequential_ms);
  };
}

}  // namespace collage
