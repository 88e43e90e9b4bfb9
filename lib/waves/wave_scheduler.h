// The compile-time wave scheduler (Rammer's Algorithm 1): kernels in breadth-first waves, each
// wave's chunks placed on the earliest available virtual execution unit (worker) by profiled
// time, a variant (chunk count; for a library kernel with its own thread team, exclusive or
// pinned to one thread) chosen per kernel by SelectRKernels, and consecutive waves merged into
// one barrier-free segment when the simulated time says so.
#pragma once

#include <cstdint>
#include <vector>

#include "wave_schedule.h"

namespace collage::waves {

// Profiled time of one kernel: microseconds of each of its own tasks, run alone on one worker.
// An exclusive kernel parallelises inside (a library kernel with its own thread team): run as
// it is, it is one chunk with every worker to itself, so that its threads do not compete with
// others. A kernel that can limit its team has pinned_us, its task times with the team limited
// to the worker's own thread (its pinned variant), with which it runs beside others like any
// kernel.
struct KernelProfile {
  std::vector<double> task_us;
  bool exclusive = false;
  std::vector<double> pinned_us = {};  // empty, or one per task: the pinned variant's times
};

// The machine and the costs the simulation charges (microseconds).
struct SchedulerOptions {
  uint32_t workers = 2;
  double chunk_overhead_us = 0.5;  // starting a chunk: the entry call, the step counter
  double wait_us = 2.0;            // a wait on another worker's chunk that is still running
  double barrier_us = 2.0;         // a barrier between two segments
  bool merge_waves = true;         // false: every wave is its own segment
  bool select_variants = true;     // false: every kernel keeps its most efficient variant
  // How a kernel with a thread team of its own (one with a pinned variant) runs: as profiled
  // (the default: exclusive when its team looked parallel, else as is, and pinned where the
  // simulation prefers); beside: pinned to one thread wherever its wave has other kernels, as
  // profiled where it is alone in its wave (the alternative make_artifact_schedule measures
  // against the default's choice); or, to measure the choices against each other
  // (bench/ov_threads_bench), always exclusive, always pinned to one thread, or shared: an
  // ordinary chunk beside the others with its team unlimited, its pool and the executor's
  // competing for the cores.
  enum class Teams : uint8_t { profiled, exclusive, pinned, shared, beside };
  Teams teams = Teams::profiled;
};

// Per kernel, the wave it belongs to: 0 for kernels without dependencies, else one more than the
// latest wave among its dependencies (the breadth-first fringes of the DAG).
std::vector<uint32_t> wave_levels(const std::vector<std::vector<uint32_t>>& deps);

// The chunk counts worth trying for a kernel of `task_count` tasks on `workers` workers:
// powers of two, the worker count and the task count itself, ascending, none above task_count.
std::vector<uint32_t> chunk_variants(int32_t task_count, uint32_t workers);

struct ScheduleResult {
  WaveSchedule schedule;  // chunks, workers, waves and segments; no measurements yet
  double predicted_us = 0;       // the simulated makespan
  std::vector<uint32_t> segment_of_wave;
  // make_artifact_schedule measured the simulation's choice for team kernels against pinning
  // those that share their wave (SchedulerOptions::Teams::beside) and kept the faster.
  bool teams_measured = false;
};

// Schedules kernels with `profiles` (task_us.size() is the kernel's task count, at least one;
// pinned_us empty or of the same size) and dependencies `deps` (kernel_dependencies: earlier
// kernels only). The result passes check_wave_schedule.
ScheduleResult schedule_waves(const std::vector<KernelProfile>& profiles,
                              const std::vector<std::vector<uint32_t>>& deps,
                              const SchedulerOptions& options);

}  // namespace collage::waves
