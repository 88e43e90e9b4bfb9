// The end-to-end measurer: the graph-level search's fitness, the latency of a whole placed model
// compiled with compile_placement and run in process.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collage/executor.h"
#include "collage/placement.h"
#include "collage/thread_pool.h"
#include "placement/timing.h"

namespace collage {

struct EndToEndOptions {
  SamplingOptions sampling{/*min_samples=*/3, /*max_samples=*/15, /*settle_within=*/0.02,
                           /*max_ms=*/2000};
  int warmup_runs = 1;
  // waves / automatic, with `executor_latency`: a placement is scored as its artifact would run
  // (the driver's scorer profiles its kernels, wave-schedules them and measures the wave
  // executor; automatic: the faster of it and the sequential one), so two smaller kernels side by
  // side can beat one faster kernel. Placements it cannot score, and sequential, are measured
  // running in process one kernel after another.
  PlacementExecutor executor = PlacementExecutor::sequential;
  std::string target;      // BuildOptions::target of every kernel built
  std::string code_cache;  // BuildOptions::code_cache of every kernel built
  MeasuredChoices* choices = nullptr;  // BuildOptions::choices of every kernel built
  KernelShelf* shelf = nullptr;        // BuildOptions::shelf of every kernel built
  bool measure_choices = true;         // BuildOptions::measure_choices of every kernel built
  ExecutorLatency executor_latency;
  int32_t channel_block = -1;  // BuildOptions::channel_block of every placement built
};

// Compiles the placement (every group built by its backend, kernels run on `pool`), runs it on
// fixed random inputs (one seeded tensor per graph input, made once) `warmup_runs` times
// untimed, then samples whole runs until the median settles (Sampler), and returns the median.
// Compilation time is not counted. Kernels are built once per group and shared by every
// placement measured that contains the group (the backends are wrapped in caching proxies), so
// the search spends its budget running placements rather than rebuilding them.
class EndToEndMeasurer : public PlacementEvaluator {
 public:
  // Everything is borrowed and must outlive the measurer.
  EndToEndMeasurer(const Context& ctx, const BackendRegistry& backends, const Graph& g,
                   ThreadPool* pool, EndToEndOptions options = {}, uint64_t seed = 0);
  absl::StatusOr<double> latency_ms(const Placement& p) override;

  // Placements scored under the wave executor / in process so far (for reports and tests).
  int wave_scored() const { return wave_scored_; }
  int sequential_scored() const { return sequential_scored_; }

 private:

  const Context& ctx_;
  BackendRegistry cached_;  // caching proxies of the backends, by the same names
  const Graph& g_;
  ThreadPool* pool_;
  EndToEndOptions options_;
  std::vector<Tensor> inputs_;
  int wave_scored_ = 0, sequential_scored_ = 0;
};

}  // namespace collage
