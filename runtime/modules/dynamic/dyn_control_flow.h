// If, Loop and Scan in the dynamic module: their bodies (dyn_body.h) made into kernels of this
// module when the control-flow kernel is created, and run per branch, iteration or step on the
// values of the run, as the reference executor does (lib/ops/control_flow.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/runtime_module.h"
#include "dyn_params.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {

// Iterations a Loop may run before it is stopped (the reference's bound): a loop whose condition
// never turns false is an error of the run, never a hang.
inline constexpr int64_t kMaxLoopIterations = 1'000'000;
// Control flow nested deeper than this in one kernel is refused when the kernel is created.
inline constexpr int kMaxBodyDepth = 16;

class ControlFlow {
 public:
  // The bodies of `p` (an If, Loop or Scan) decoded, checked against `desc` (its constants) and
  // made into kernels; `depth` is how deep this kernel is nested. Empty string on success.
  static std::string create(const DynParams& p, const collage_kernel_desc_t& desc, int depth,
                            std::shared_ptr<const ControlFlow>* out);
  ~ControlFlow();
  // One run on the kernel's operands `in` (DynKernel::operands); throws KernelError.
  void run(const std::vector<Value>& in, Outputs& out) const;

  struct BodyRun;  // a body and its kernels
  struct Slot;     // a value of one body run

 private:
  ControlFlow() = default;
  std::vector<Slot> run_body(const BodyRun& b, const std::vector<Slot>& inputs,
                             const char* what) const;
  void run_if(const std::vector<Value>& in, Outputs& out) const;
  void run_loop(const std::vector<Value>& in, Outputs& out) const;
  void run_scan(const std::vector<Value>& in, Outputs& out) const;
  // Writes body results `values` to the kernel's outputs through the output slots.
  void write_outputs(const std::vector<Slot>& values, Outputs& out) const;

  DynParams params_;
  std::vector<std::unique_ptr<BodyRun>> bodies_;
  std::vector<int64_t> slots_;  // per kernel output: the node output it is
};

}  // namespace collage::rt_dynamic
