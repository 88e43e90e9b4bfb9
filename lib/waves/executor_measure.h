// The compile-time comparison of the two executors: the kernels of an artifact run over real
// buffers in process, alternately in sequence (each kernel's tasks over a thread pool, as the
// runtime's sequential executor does) and by the wave schedule (the runtime's WaveRunner).
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
};

// Runs both executors `warmup` times untimed, then `runs` times each, alternating, and returns
// the medians. The sequential executor uses schedule.workers.size() threads too. Errors are the
// first kernel error.
absl::StatusOr<ExecutorTimes> measure_executors(const std::vector<BoundKernel>& kernels,
                                                const WaveSchedule& schedule, int runs = 15,
                                                int warmup = 2);

}  // namespace collage::waves
