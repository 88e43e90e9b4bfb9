// What an artifact holds, as the compiler reports it after writing one (the file itself is
// described in docs/artifact-format.md and loaded by include/collage/runtime.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace collage {

struct ArtifactSummary {
  uint64_t file_bytes = 0;
  uint64_t constant_bytes = 0;
  uint64_t native_code_bytes = 0;
  uint64_t arena_bytes = 0;     // one run's arena, after reuse
  uint64_t unshared_bytes = 0;  // the intermediates without reuse
  size_t kernels = 0;
  std::vector<std::string> modules;  // runtime modules the artifact needs, in first-use order
  // The wave schedule, when one was written.
  bool has_schedule = false;
  uint32_t workers = 0, num_waves = 0, num_segments = 0;
  uint32_t exclusive_kernels = 0;          // kernels with their own thread team, run alone
  uint32_t pinned_kernels = 0;  // kernels with their own thread team, limited to fewer threads
  // The schedule the simulation chose ran such a kernel exclusive beside other work of its wave,
  // and was measured against one with those kernels pinned (the faster kept: exclusive only when
  // clearly faster).
  bool teams_measured = false;
  double predicted_us = 0;                 // the scheduler's simulated makespan
  double waves_ms = 0, sequential_ms = 0;  // measured (0: not measured)
  std::string executor;                    // the default: "waves" or "sequential"
  // A dynamic-batch artifact: the batch of each plan, ascending (the figures above are the
  // largest one's, the root plan's). Empty otherwise.
  std::vector<int64_t> batches;
  // 2 when some value's shape depends on data (Dynamic storage), else 1 (docs/artifact-format.md).
  uint32_t format_version = 1;
};

}  // namespace collage
