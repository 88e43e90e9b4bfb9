// A kernel of the dynamic module: one operator whose shapes are known only at run time, created
// from its descriptor (the operator and its parameters, its arguments' types with -1 for unknown
// dimensions, its constants) and run on its inputs' actual shapes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/runtime_module.h"
#include "dyn_params.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {

class ControlFlow;

class DynKernel {
 public:
  // Empty string on success (kernel set), else why the descriptor is refused.
  // `depth`: how deep in control-flow bodies the kernel sits (dyn_control_flow.h).
  static std::string create(const collage_kernel_desc_t& desc, DynKernel*& kernel,
                            int depth = 0);
  // Runs once: `inputs` are the kernel's input arguments with their shapes; outputs come from
  // `alloc`. Empty string on success, else the error.
  std::string run(const collage_rt_tensor_t* inputs, int32_t num_inputs,
                  collage_rt_alloc_fn alloc, void* alloc_ctx) const;
  // Runs once on the planned buffers `args` (inputs, then outputs) of a kernel whose every shape
  // is known (an operator given an attribute at run time, as Dropout's ratio, or
  // SVMPairwiseCoupling in a static plan); an output made in another shape is an error. Empty
  // string on success, else the error.
  std::string run_static(void* const* args) const;
  // Tasks of a static run (>= 1; above 1 only for the scans, dyn_ops_scan.cpp), and task `task`
  // of `tasks` of it on the planned buffers `args`. Empty string on success, else the error.
  int32_t task_count() const { return tasks_; }
  std::string run_static_task(void* const* args, int32_t task, int32_t tasks) const;

 private:
  // The parameters with each list that comes from an integer operand read from `in` (throws
  // KernelError for an operand of rank above 1); other operands are left to the operator.
  DynParams with_run_time_lists(const std::vector<Value>& in) const;
  // The operator's inputs, each from its kernel argument (of `inputs`), constant or nowhere.
  std::vector<Value> operands(const collage_rt_tensor_t* inputs) const;
  // Empty string when every argument's shape is known, else why a static run is refused.
  std::string static_shapes_error() const;

  DynParams params_;
  std::vector<int32_t> input_dtypes_;
  std::vector<size_t> input_ranks_;
  // Every argument's shape as the descriptor gives it (-1: known only at run time).
  std::vector<std::vector<int64_t>> arg_shapes_;
  std::vector<int32_t> output_dtypes_;
  std::vector<size_t> output_ranks_;
  std::vector<Value> constants_;
  int32_t tasks_ = 1;
  // If, Loop and Scan: their bodies' kernels.
  std::shared_ptr<const ControlFlow> control_;
};

}  // namespace collage::rt_dynamic
