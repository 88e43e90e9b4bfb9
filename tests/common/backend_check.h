// The one backend test harness: graphs built node by node or as one operator, random inputs, and
// check_group, which runs a whole graph as one group of any backend (in process at several thread
// counts, and through the backend's runtime module with several task splits and on threads) and
// compares it with the reference executor. Backend-specific checks read the returned kernel record.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/runtime_module.h"

namespace collage::testing {

// One random tensor of `type` from `seed`: floats uniform in [lo, hi), integers uniform in [0, 5),
// bools true where a float drawn in [lo, hi) is positive.
Tensor random_tensor(const TensorType& type, uint64_t seed, float lo = -1.f, float hi = 1.f);
// One random tensor per graph input, in order, from seeds seed, seed+1, ...
std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed, float lo = -1.f, float hi = 1.f);

// A graph under construction whose inputs each have their own value range, with random constants
// (fixed seeds).
class TestGraph {
 public:
  TestGraph();
  // The input is fed random_tensor values in [lo, hi).
  ValueId input(Shape shape, DType dtype = DType::f32, float lo = -1.f, float hi = 1.f);
  ValueId constant(Shape shape, float lo = -1.f, float hi = 1.f);
  ValueId constant(Tensor t);
  // Adds a node; fails the test when the graph builder refuses it.
  ValueId op(std::string_view name, std::vector<ValueId> inputs,
             std::shared_ptr<const OpAttrs> attrs = nullptr);
  const Shape& shape(ValueId v) const;
  // Finishes the graph with `out` as its only output.
  Graph finish(ValueId out);
  const Context& context() const { return *ctx_; }
  // One random tensor per graph input, in order, each in its input's range.
  std::vector<Tensor> feed(const Graph& g) const;

 private:
  struct Range {
    float lo, hi;
  };
  std::vector<Range> ranges_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<GraphBuilder> b_;
  uint64_t seed_ = 1;
};

// A graph of one operator node named "op" over inputs of the given types (constants where
// `constants` has a tensor for the position). Fails the test when the builder refuses it.
Graph single_op_graph(const Context& ctx, const std::string& op,
                      const std::vector<TensorType>& inputs,
                      std::shared_ptr<const OpAttrs> attrs = nullptr,
                      const std::vector<Tensor>& constants = {}, int num_outputs = -1);

// A kernel instance created straight from a record through a runtime module's C table, as the
// runtime does. Owns the instance.
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
  // Runs tasks 0..task_count-1 (on `threads` threads when > 1) and returns the outputs (filled
  // with all-ones bytes beforehand, so unwritten elements show); sets error() and returns nothing
  // when a task fails.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, int32_t task_count, int threads = 1);

 private:
  const collage_rt_module_v1_t* module_;
  const Graph& group_;
  void* instance_ = nullptr;
  std::string error_;
};

struct GroupResult;

// How check_group runs a graph and compares it with the reference. Float outputs: relative error
// per element when `elementwise` (floor: 1e-3, or `floor_fraction` of the output's largest
// magnitude when set), else relative to the output's largest magnitude (max_scaled_error).
// Integer and bool outputs must be identical.
struct GroupCheck {
  double tolerance = 1e-5;
  float lo = -1.f, hi = 1.f;  // random input range
  uint64_t seed = 3;          // of the random inputs
  bool elementwise = true;
  double floor_fraction = 0;
  // The backend's patterns must offer the whole graph as one candidate.
  bool claim = false;
  // Build once per entry with BuildOptions::num_threads set to it, and run every task in process.
  std::vector<int> threads = {1, 3, 8};
  // When set: the record also runs through this runtime module with several task splits and on
  // four threads, and every run must give bit-identical outputs to the in-process one.
  const collage_rt_module_v1_t* module = nullptr;
  // The graph inputs; empty: random_inputs(g, seed, lo, hi).
  std::vector<Tensor> inputs = {};
  // Backend-specific checks of the built record (e.g. oneDNN's packed constants).
  std::function<void(const GroupResult&, const Graph& group)> inspect = nullptr;
};

// What backend-specific tests inspect after check_group.
struct GroupResult {
  double error = 0;     // the largest error found (by the check's measure) over every run
  std::string origin;   // the pattern or rule that claimed the whole graph (claim only)
  KernelRecord record;  // of the last build (from the checked graph)
};

// Checks `g` as one group of `backend` (REQUIREs and CHECKs inside) as GroupCheck says.
GroupResult check_group(const Backend& backend, const Graph& g, const GroupCheck& check = {});

// Whether `backend` offers all of `g` as one candidate, and the status of building it as one
// group: for the groups a backend must refuse.
struct GroupAttempt {
  bool offered = false;
  absl::Status build;
};
GroupAttempt try_group(const Backend& backend, const Graph& g);

// True when `backend` offers a candidate covering every node of `g` (its origin in *origin).
bool claims_whole_graph(const Backend& backend, const Graph& g, std::string* origin = nullptr);

}  // namespace collage::testing
