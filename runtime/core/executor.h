// Execution of a loaded artifact: the plan as a list of steps with resolved argument locations,
// the buffers of one run (a frame), and the scheduler interface that runs the steps. The
// sequential scheduler runs steps in order with each step's tasks spread over a TaskPool; a wave
// scheduler (Rammer) can replace it behind the same interface.
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
};

struct Step {
  const KernelInstance* kernel = nullptr;
  uint32_t kernel_index = 0;  // into Program::kernels
  std::vector<ArgRef> args;
};

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
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Runs every step of `plan` over `frame`; the first error stops the run. Must be callable from
  // several threads at once (each with its own frame).
  virtual Status run(const ExecPlan& plan, const Frame& frame) const = 0;
};

// Steps one after another; the tasks of a step spread over `pool` (borrowed).
std::unique_ptr<Scheduler> make_sequential_scheduler(TaskPool* pool);

}  // namespace collage::rt
