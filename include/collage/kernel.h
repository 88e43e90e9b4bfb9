// Kernel: one compiled group (a subgraph placed on one backend), runnable in process and
// describable as a record the runtime can rebuild it from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/tensor.h"

namespace collage {

// What the runtime needs to recreate a kernel from an artifact: the runtime module that executes
// it (include/collage/runtime_module.h), the module-specific entry and parameters, and the
// constants it owns (already in the layout the kernel wants, e.g. pre-packed weights).
struct KernelRecord {
  // "native", "dnnl", "eigen", or a plugin backend's name; empty for a kernel that runs in
  // process only (a plugin without kernel_record), which no artifact can hold.
  std::string module;
  std::string entry;   // kernel kind or native symbol name
  std::vector<uint8_t> params;
  std::vector<Tensor> constants;
};

// A kernel reads the group's inputs and writes its outputs. Arguments are dense row-major
// buffers: inputs first, then outputs, in the order of the group's standalone graph. The work is
// split into task_count() independent tasks which may run concurrently; running every task once
// computes the outputs. A kernel may be run from several threads at once.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual int32_t task_count() const = 0;
  // Runs task `task_id` (0 <= task_id < task_count()). Errors (possible for plugin kernels)
  // name the kernel.
  virtual absl::Status run_task(void* const* args, int32_t task_id) = 0;
  // Whether a task runs on a thread team of the kernel's own (a library's OpenMP team) that
  // run_task_threads can limit.
  virtual bool has_thread_team() const { return false; }
  // run_task with the kernel's own thread team limited to at most `max_threads` threads, the
  // calling thread included (>= 1), so that several such kernels can run side by side. A kernel
  // without a team of its own runs as run_task.
  virtual absl::Status run_task_threads(void* const* args, int32_t task_id, int32_t max_threads) {
    (void)max_threads;
    return run_task(args, task_id);
  }
  virtual const KernelRecord& record() const = 0;
  // Whether the kernel runs a group whose shapes depend on data (values with a kDynamicDim
  // dimension): it runs through run_dynamic, never run_task.
  virtual bool dynamic_shapes() const { return false; }
  // Runs such a group on its inputs, whose shapes are known only now, and returns its outputs,
  // sized as they come out. Unimplemented for other kernels.
  virtual absl::StatusOr<std::vector<Tensor>> run_dynamic(const std::vector<Tensor>& inputs) {
    (void)inputs;
    return absl::UnimplementedError("this kernel has static shapes; run it task by task");
  }
};

}  // namespace collage
