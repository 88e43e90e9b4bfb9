// Per-kernel timings of a loaded module's runs, written as a Chrome trace (chrome://tracing,
// Perfetto): one complete event per kernel with its name, backend, start and duration.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "executor.h"
#include "program.h"

namespace collage::rt {

class Profiler {
 public:
  Profiler() : origin_(std::chrono::steady_clock::now()) {}

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // Turning profiling on starts a new trace (earlier events are dropped).
  void set_enabled(bool on);
  // Records one run of `program` (the plan that ran: a dynamic-batch artifact has one per
  // batch it was compiled for, each outliving the profiler): its steps' timings, on the calling
  // thread.
  void add_run(const Program& program, const ExecPlan& plan,
               const std::vector<StepTiming>& timings, std::chrono::steady_clock::time_point start,
               std::chrono::steady_clock::time_point end);
  // The trace as Chrome-trace JSON.
  std::string json() const;

 private:
  struct Event {
    const Program* program;
    int32_t kernel;  // -1: a whole run
    int32_t thread;
    int64_t start_ns, duration_ns;
  };
  int32_t thread_ordinal();  // mu_ held

  std::atomic<bool> enabled_{false};
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mu_;
  std::vector<Event> events_;
  std::vector<std::thread::id> threads_;
};

}  // namespace collage::rt
