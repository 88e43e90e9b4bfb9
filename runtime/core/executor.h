// Execution of a loaded artifact: the plan as a list of steps with resolved argument locations,
// the buffers of one run (a frame), and the scheduler interface that runs the steps. The
// sequential scheduler runs steps in order with each step's tasks spread over a TaskPool; the wave
// scheduler (wave_executor.h, Rammer) replaces it behind the same interface.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels.h"
#include "program.h"
#include "task_pool.h"

namespace collage::rt {

// Where a kernel argument lives in a run.
struct ArgRef {
  Storage storage = Storage::arena;
  uint64_t location = 0;  // arena: byte offset; input/output: position; constant: id
  uint32_t tensor = 0;    // tensor id (the index of a dynamic tensor's run-time value)
  const TensorInfo* info = nullptr;
};

struct Step {
  const KernelInstance* kernel = nullptr;
  uint32_t kernel_index = 0;  // into Program::kernels
  std::vector<ArgRef> args;
  uint32_t num_inputs = 0;
  bool dynamic = false;  // KernelInfo::dynamic: run through KernelInstance::run_dynamic
  bool strings = false;  // KernelInfo::strings: run through KernelInstance::run_strings
};

// The bytes of the strings that kernels write during one run (collage_rt_bytes_fn): freed with
// the run's values, or kept alive by the outputs that point into them (run_outputs).
class StringBytes {
 public:
  // `size` bytes, or null when out of memory or beyond 2^40 bytes in all. Not thread-safe:
  // string kernels run one at a time (the loader refuses a wave schedule for them).
  void* allocate(uint64_t size);

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  uint64_t total_ = 0;
};

// A tensor of Storage::dynamic in one run: its shape and buffer, made when its kernel ran.
struct DynamicValue {
  std::vector<int64_t> shape;
  std::unique_ptr<uint8_t[]> data;
};
using DynamicValues = std::vector<DynamicValue>;  // per tensor id

struct ExecPlan {
  std::vector<Step> steps;
  std::vector<const void*> constants;  // per constant id
};

// Start and end of each step of a run, for profiles.
struct StepTiming {
  std::chrono::steady_clock::time_point start, end;
};

// The buffers of one run. `timings`, when not null, receives one entry per step.
struct Frame {
  uint8_t* arena = nullptr;
  const void* const* inputs = nullptr;
  void* const* outputs = nullptr;
  std::vector<StepTiming>* timings = nullptr;
  DynamicValues* dynamic = nullptr;  // sized to the tensors when the plan has dynamic ones
  StringBytes* strings = nullptr;    // when the plan has strings
};

// What a scheduler's runs cost, summed since it was made (nanoseconds; zero for a scheduler that
// does not measure itself). Scheduling overhead: time the workers spent neither in kernels nor
// waiting on a dependency (step counters, bookkeeping), averaged over the workers; the wake-up
// of the workers at a run's start is counted apart.
struct SchedulerStats {
  const char* name = "sequential";
  uint64_t runs = 0;
  uint64_t wall_ns = 0, task_ns = 0, wait_ns = 0, overhead_ns = 0;
  uint64_t wake_ns = 0;  // from a run's start until its workers run (thread wake-up)
  uint64_t fallback_runs = 0;  // runs handed to the sequential scheduler (workers busy)
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual SchedulerStats stats() const { return {}; }
  // Runs every step of `plan` over `frame`; the first error stops the run. Must be callable from
  // several threads at once (each with its own frame).
  virtual Status run(const ExecPlan& plan, const Frame& frame) const = 0;
};

// Where argument `a` of a step lives in the run of `frame`.
void* arg_pointer(const ExecPlan& plan, const Frame& frame, const ArgRef& a);

// Runs a step whose kernel has data-dependent shapes (dynamic_run.cpp): its inputs passed with
// their run-time shapes, its outputs allocated once it knows their shapes (dynamic tensors in
// frame.dynamic, the others where the plan puts them, after checking the shape).
// A step with strings runs the same way, through KernelInstance::run_strings, the bytes of its
// strings taken from frame.strings.
Status run_dynamic_step(const ExecPlan& plan, const Frame& frame, const Step& step);

// Steps one after another; the tasks of a step spread over `pool` (borrowed).
std::unique_ptr<Scheduler> make_sequential_scheduler(TaskPool* pool);

}  // namespace collage::rt
