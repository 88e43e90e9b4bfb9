// The compile-time comparison of the two executors: the kernels of an artifact run over real
// buffers in process, alternately in sequence (each kernel's tasks over a thread pool, as the
// runtime's sequential executor does) and by the wave schedule (the runtime's WaveRunner), and
// the choice between them; and the same comparison of two wave schedules.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "collage/kernel.h"
#include "wave_schedule.h"

namespace collage::waves {

// A kernel with the buffers of one run resolved (inputs, then outputs).
struct BoundKernel {
  Kernel* kernel = nullptr;
  std::vector<void*> args;
};

struct ExecutorTimes {
  double sequential_ms = 0, waves_ms = 0;  // medians of whole runs
  int pairs = 0;                           // runs of each executor, measured back to back
  double waves_ratio = 1;                  // median over the pairs of waves / sequential
  int waves_faster = 0;                    // pairs in which the wave executor was faster
};

struct ExecutorMeasureOptions {
  int runs = 15;         // pairs of runs (one of each executor) at most
  int min_runs = 5;      // ... at least, whatever max_ms says
  int warmup = 2;        // untimed pairs first
  double max_ms = 3000;  // wall-clock bound of the timed pairs (after min_runs)
};

// Runs both executors `warmup` times untimed, then in pairs until `runs` pairs or max_ms, the
// order within a pair alternating (sequential first, then waves first: a drift or a warm cache
// favours neither), and returns the medians and the pairwise comparison. The sequential executor
// uses schedule.workers.size() threads too. Errors are the first kernel error.
absl::StatusOr<ExecutorTimes> measure_executors(const std::vector<BoundKernel>& kernels,
                                                const WaveSchedule& schedule,
                                                const ExecutorMeasureOptions& options = {});

// Whether measured `times` say the wave executor is faster by a margin that holds when measured
// again: the median pairwise ratio at most 1 - margin and waves faster in at least two thirds
// of the pairs. Otherwise the sequential executor, the simpler one, is kept.
bool waves_clearly_faster(const ExecutorTimes& times, double margin);

// Two wave schedules of the same kernels measured against each other as measure_executors
// measures the executors ("first" in place of the sequential executor, "second" of the waves),
// each run by the runtime's WaveRunner on first.workers.size() workers.
struct ScheduleTimes {
  double first_ms = 0, second_ms = 0;  // medians of whole runs
  int pairs = 0;
  double second_ratio = 1;  // median over the pairs of second / first
  int second_faster = 0;    // pairs in which the second schedule was faster
};
absl::StatusOr<ScheduleTimes> measure_wave_schedules(const std::vector<BoundKernel>& kernels,
                                                     const WaveSchedule& first,
                                                     const WaveSchedule& second,
                                                     const ExecutorMeasureOptions& options = {});

// Whether `times` say the second schedule is faster by `margin`, as waves_clearly_faster says of
// the wave executor: the median ratio at most 1 - margin, and faster in two thirds of the pairs.
bool second_clearly_faster(const ScheduleTimes& times, double margin);

}  // namespace collage::waves
