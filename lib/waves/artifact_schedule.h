// The wave schedule of an artifact, made by the writer: kernel dependencies over the final
// memory plan, per-task profiles of the live kernels, Algorithm 1, and the two executors
// measured against each other to choose the default.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/kernel.h"
#include "collage/measured_choices.h"
#include "collage/tensor.h"
#include "waves/wave_scheduler.h"

namespace collage::waves {

// Which executor an artifact's runs use by default. `none`: write no schedule (the artifact
// runs sequentially); `automatic`: the one measured faster at compile time.
enum class ExecutorChoice : uint8_t { none, automatic, sequential, waves };

struct WaveOptions {
  ExecutorChoice executor = ExecutorChoice::none;
  uint32_t workers = 0;          // virtual execution units; 0: the machine's hardware threads
  SchedulerOptions scheduler;    // its `workers` is replaced by the above
  int profile_repeats = 5;       // timings per task (median)
  int measure_runs = 15;         // whole runs per executor (median), at most
  int measure_min_runs = 5;      // ... at least, whatever measure_max_ms says
  int measure_warmup = 2;        // untimed runs of each first
  double measure_max_ms = 3000;  // wall-clock bound of those runs (after measure_min_runs)
  // automatic: the wave executor is preferred only when it measured at least this much faster
  // (waves_clearly_faster), so that the choice holds when the artifact is measured again.
  double waves_margin = 0.03;
  // Whether kernels may be profiled and the executors measured when `choices` has no schedule
  // for them; false (a compile whose time budget is spent): every task counts 1 us, as for a
  // kernel that is not live, and `automatic` takes the sequential executor; nothing is
  // remembered.
  bool measure = true;
  // When the profiles and the executors' runs must end, checked once the artifact's kernels are
  // built and recorded (an OpenVINO region's record serializes and exports its model: BERT-base
  // as one region, the compile ended 3.2 s past its budget): they start only when
  // `measure_runs_ms` from now ends before it. The largest time point: no such end.
  std::chrono::steady_clock::time_point measure_until = std::chrono::steady_clock::time_point::max();
  double measure_runs_ms = 0;
  // Whether `measure_runs_ms` from now ends by `measure_until`.
  bool measure_in_time() const {
    return measure_until == std::chrono::steady_clock::time_point::max() ||
           std::chrono::steady_clock::now() +
                   std::chrono::duration<double, std::milli>(measure_runs_ms) <=
               measure_until;
  }
  // Where the profiles, the team choice and the executors' times are remembered (not owned;
  // null: measured every time). With them remembered, the same kernels get the same schedule and
  // preference and nothing runs (schedule_choice.h).
  MeasuredChoices* choices = nullptr;
};

// A kernel of the artifact, in plan order.
struct ScheduleKernel {
  Kernel* kernel = nullptr;  // live, to profile and measure; null: 1 us per task, no measurement
  int32_t task_count = 1;
  std::vector<uint32_t> reads, writes;  // tensor ids, in argument order (inputs, then outputs)
};

// A tensor of the artifact where a run finds it.
struct ScheduleTensor {
  enum class Where : uint8_t { arena, input, output, constant };
  Where where = Where::arena;
  uint64_t location = 0;  // arena: byte offset; input, output: position
  TensorType type;
};

// Per kernel, the wave of the dataflow alone (read after write), which the writer orders the
// kernels and plans their memory by before the schedule is made.
std::vector<uint32_t> dataflow_waves(const std::vector<ScheduleKernel>& kernels,
                                     size_t num_tensors);

// The schedule for `kernels` over `tensors` (arena of `arena_bytes`): options.executor must not
// be `none`. Measures both executors when every kernel is live (else sets neither time and
// prefers what options.executor says, sequential for automatic). When every kernel is live and
// the simulation runs a kernel with a thread team of its own exclusive beside other kernels of
// its wave, that schedule is first measured against the one with such kernels pinned
// (SchedulerOptions::Teams::beside) and kept only when clearly faster (waves_margin, as
// second_clearly_faster says; ScheduleResult::teams_measured). With options.choices, what was
// measured is remembered there, and taken from there instead of measured when it is found.
// Errors are a kernel's.
absl::StatusOr<ScheduleResult> make_artifact_schedule(const std::vector<ScheduleKernel>& kernels,
                                                      const std::vector<ScheduleTensor>& tensors,
                                                      uint64_t arena_bytes,
                                                      const WaveOptions& options);

}  // namespace collage::waves
