// The in-process form of a native kernel: JIT-compiled code, its constants appended to the
// arguments, and the record whose object code is emitted on first request (placement measures
// many kernels that never reach an artifact).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "collage/jit.h"
#include "collage/kernel.h"
#include "collage/loop_ir.h"

namespace collage::native {

class NativeKernel : public Kernel {
 public:
  // `record` has module, entry and constants; `num_args` counts the group's inputs and outputs.
  NativeKernel(std::shared_ptr<const codegen::JitModule> jit, codegen::KernelFn fn, int32_t tasks,
               size_t num_args, KernelRecord record, te::PrimFunc kernel,
               codegen::TargetSpec target);

  int32_t task_count() const override { return tasks_; }
  absl::Status run_task(void* const* args, int32_t task_id) override;
  // The record; its params (the object code) are emitted by the first call. Empty params mean
  // that code generation failed (reported when an artifact is linked).
  const KernelRecord& record() const override;

 private:
  std::shared_ptr<const codegen::JitModule> jit_;  // shared by the kernels of identical groups
  codegen::KernelFn fn_;
  int32_t tasks_;
  size_t num_args_;
  std::vector<void*> constant_ptrs_;
  mutable KernelRecord record_;
  mutable std::once_flag emitted_;
  te::PrimFunc kernel_;
  codegen::TargetSpec target_;
};

}  // namespace collage::native
