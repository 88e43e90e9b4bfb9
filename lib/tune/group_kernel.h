// A scheduled anchor group compiled into a runnable kernel (JIT), the way the native backend runs
// it: pre-packed constants computed once, then the main kernel on a thread pool. Used by the
// tuner to time configurations, and by tests and benchmarks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/jit.h"
#include "collage/tensor.h"
#include "collage/thread_pool.h"
#include "collage/te_ops.h"

namespace collage::tune {

class GroupKernel {
 public:
  // Lowers and JIT-compiles `scheduled` for `group`. The main kernel's parameters are the group
  // inputs that a stage other than a pre-packed one reads, then the pre-packed tensors, then the
  // group outputs. Errors: the lowering's or compiler's status.
  static absl::StatusOr<GroupKernel> compile(const te_ops::AnchorGroup& group,
                                             const te_ops::ScheduledGroup& scheduled,
                                             const std::string& name = "group");

  // Binds input values (one per group input, in order; shapes must match) and computes the
  // pre-packed tensors from them. InvalidArgument on a count or shape mismatch.
  absl::Status bind(const std::vector<Tensor>& inputs);
  // Runs the main kernel on the bound inputs as `tasks` tasks (on `pool` when given).
  void run(int tasks, ThreadPool* pool);
  // The outputs of the last run (one per group output).
  const std::vector<Tensor>& outputs() const { return outputs_; }

 private:
  GroupKernel() = default;
  std::unique_ptr<codegen::JitModule> module_;
  codegen::KernelFn main_ = nullptr;
  std::vector<codegen::KernelFn> packs_;
  std::vector<std::vector<te::Tensor>> pack_params_;  // per pre-packed tensor: its sources, itself
  std::vector<te::Tensor> params_;                    // main kernel parameters
  std::vector<te::Tensor> inputs_, prepacked_, outputs_te_;
  std::vector<Tensor> input_values_, packed_values_, outputs_;
  std::vector<void*> args_;
};

}  // namespace collage::tune
