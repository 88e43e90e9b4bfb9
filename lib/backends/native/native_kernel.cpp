// NativeKernel: running JIT-compiled group kernels and emitting their object code.
#include "backends/native/native_kernel.h"

#include <algorithm>

#include "codegen/llvm/object.h"

namespace collage::native {

NativeKernel::NativeKernel(std::shared_ptr<const codegen::JitModule> jit, codegen::KernelFn fn,
                           int32_t tasks, size_t num_args, KernelRecord record, te::PrimFunc kernel,
                           codegen::TargetSpec target)
    : jit_(std::move(jit)),
      fn_(fn),
      tasks_(tasks),
      num_args_(num_args),
      record_(std::move(record)),
      kernel_(std::move(kernel)),
      target_(std::move(target)) {
  for (const Tensor& c : record_.constants) constant_ptrs_.push_back(const_cast<void*>(c.raw()));
}

absl::Status NativeKernel::run_task(void* const* args, int32_t task_id) {
  if (constant_ptrs_.empty()) {
    fn_(args, task_id, tasks_);
    return absl::OkStatus();
  }
  // Tasks are short (a kernel has several per thread): no allocation for the usual few arguments.
  constexpr size_t kInline = 32;
  const size_t total = num_args_ + constant_ptrs_.size();
  void* inline_args[kInline];
  std::vector<void*> heap_args(total > kInline ? total : 0);
  void** all = total > kInline ? heap_args.data() : inline_args;
  std::copy(args, args + num_args_, all);
  std::copy(constant_ptrs_.begin(), constant_ptrs_.end(), all + num_args_);
  fn_(all, task_id, tasks_);
  return absl::OkStatus();
}

const KernelRecord& NativeKernel::record() const {
  std::call_once(emitted_, [this] {
    // The JIT ran the object compiled for it (with the pack kernels, which an artifact does not
    // call) where it has one.
    if (!jit_->object().empty()) {
      record_.params.assign(jit_->object().begin(), jit_->object().end());
      return;
    }
    absl::StatusOr<std::string> object = codegen::emit_object({kernel_}, target_);
    if (object.ok()) record_.params.assign(object->begin(), object->end());
  });
  return record_;
}

}  // namespace collage::native
