// Helpers of the Eigen backend tests: building a whole graph as one Eigen group, running a kernel
// record through the runtime module with any task split, and comparing with the reference.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/runtime_module.h"

namespace collage::testing {

// Random inputs for every graph input, uniform in [lo, hi), from `seed`.
std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed, float lo = -1.f, float hi = 1.f);

// A kernel instance created straight from a record through a module's C table, as the runtime
// does. Owns the instance.
class ModuleInstance {
 public:
  // On failure error() is set and the instance is null.
  ModuleInstance(const collage_rt_module_v1_t* module, const KernelRecord& record,
                 const Graph& group);
  ~ModuleInstance();
  ModuleInstance(const ModuleInstance&) = delete;
  ModuleInstance& operator=(const ModuleInstance&) = delete;

  bool ok() const { return instance_ != nullptr; }
  const std::string& error() const { return error_; }
  int32_t task_count() const { return module_->kernel_task_count(instance_); }
  // Runs tasks 0..task_count-1 (on `threads` threads when > 1) and returns the outputs; sets
  // error() and returns nothing when a task fails.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, int32_t task_count, int threads = 1);

 private:
  const collage_rt_module_v1_t* module_;
  const Graph& group_;
  void* instance_ = nullptr;
  std::string error_;
};

// How a group is expected to compare with the reference.
struct EigenCheck {
  double tolerance = 1e-4;    // on max_scaled_error (and max_relative_error when elementwise)
  bool elementwise = false;   // also bound the per-element relative error
  float lo = -1.f, hi = 1.f;  // input range
  uint64_t seed = 1;
};

// Checks that the Eigen backend claims all of `g` as one candidate, builds it, and that its
// output matches run_reference within the tolerance, bitwise identically for several task
// splits and when tasks run on several threads.
void check_eigen_group(const Graph& g, const EigenCheck& check = {});

// One elementwise epilogue step applied to value x of shape `shape`: it may add constants or a
// new graph input (named after the step).
struct EpilogueStep {
  std::string name;
  std::function<ValueId(GraphBuilder& b, ValueId x, const Shape& shape)> add;
};
// Every operator the backend fuses as an epilogue, in the forms the backend accepts: unary
// operators (Log, Sqrt and Reciprocal behind Sigmoid/Exp so that their inputs are positive),
// binary operators with a trailing-vector constant, a scalar constant, a full-shape graph input,
// and with the operand first.
std::vector<EpilogueStep> epilogue_steps();
// The activations among them, one step each.
std::vector<EpilogueStep> activation_steps();
// The step of epilogue_steps() called `name` (fails the test when there is none).
EpilogueStep find_step(const std::string& name);
// Adds `steps` after x.
ValueId add_steps(GraphBuilder& b, ValueId x, const Shape& shape,
                  const std::vector<EpilogueStep>& steps);

// True when the Eigen backend offers a candidate covering every node of `g`.
bool eigen_claims_whole_graph(const Graph& g);

}  // namespace collage::testing
