// Kernel instances of a loaded artifact: one interface over runtime-module kernels and native
// (generated) functions, so the executor does not care where a kernel comes from.
#pragma once

#include <cstdint>
#include <memory>

#include "collage/runtime_module.h"
#include "module_loader.h"
#include "program.h"

namespace collage::rt {

class KernelInstance {
 public:
  virtual ~KernelInstance() = default;
  virtual int32_t task_count() const = 0;
  // Runs task `task` of task_count(); may be called from several threads at once.
  virtual Status run_task(void* const* args, int32_t task) const = 0;
  // run_task with the kernel's own thread team (a library's OpenMP team) limited to at most
  // `max_threads` threads (>= 1), the calling thread included; a kernel without a team of its
  // own, or whose module cannot limit it, runs as run_task.
  virtual Status run_task_threads(void* const* args, int32_t task, int32_t max_threads) const {
    (void)max_threads;
    return run_task(args, task);
  }
  // Readies run_task_threads with `max_threads`, so that its first run does no extra work.
  virtual Status prepare_threads(int32_t max_threads) {
    (void)max_threads;
    return Status();
  }
  // A kernel with data-dependent shapes (KernelInfo::dynamic), run as one task through its
  // module's kernel_run_dynamic.
  virtual Status run_dynamic(const collage_rt_tensor_t* inputs, int32_t num_inputs,
                             collage_rt_alloc_fn alloc, void* alloc_ctx) const {
    (void)inputs, (void)num_inputs, (void)alloc, (void)alloc_ctx;
    return error(Code::internal, "this kernel has no run with data-dependent shapes");
  }
  // A kernel with string tensors (KernelInfo::strings), run as one task through its module's
  // kernel_run_strings; the bytes of the strings it writes come from `bytes`.
  virtual Status run_strings(const collage_rt_tensor_t* inputs, int32_t num_inputs,
                             collage_rt_alloc_fn alloc, collage_rt_bytes_fn bytes,
                             void* alloc_ctx) const {
    (void)inputs, (void)num_inputs, (void)alloc, (void)bytes, (void)alloc_ctx;
    return error(Code::internal, "this kernel has no run with strings");
  }
};

// Creates kernel `index` of `program` through a runtime module's kernel_create (argument and
// constant descriptors from the program, `create_flags` the COLLAGE_KERNEL_CREATE_* bits). The
// module must outlive the kernel. `notice` receives what the module noted about the kernel it
// created ("" for nothing). Errors carry the module's message and name the kernel.
Status create_module_kernel(const Program& program, size_t index,
                            const collage_rt_module_v1_t* module, uint32_t create_flags,
                            std::unique_ptr<KernelInstance>* out, std::string* notice);

// Kernel `index` of `program` as the function named by its entry in the native code, run with
// the task count recorded in the plan. The library must outlive the kernel.
Status create_native_kernel(const Program& program, size_t index, const SharedLibrary& code,
                            std::unique_ptr<KernelInstance>* out);

}  // namespace collage::rt
