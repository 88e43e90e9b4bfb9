// Test backends whose kernels occupy cores of a simulated machine for fixed times: "team", a
// library kernel with its own 2-thread team (faster alone, but it takes both cores), and "solo",
// a single-threaded kernel (slower alone, but two of them run side by side) — and the two-branch
// graph they compete on.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "collage/backend.h"
#include "collage/context.h"
#include "collage/graph.h"

namespace collage::testing {

// A machine of `cores` simulated cores. A kernel holds the cores its thread team would keep busy
// for as long as it works, so kernels that together want more cores than there are run one after
// another. The wall time of a run is then set by the kernels' work and the order the executor
// runs them in, whatever the real machine's size and load: the kernels sleep rather than spin,
// because on a loaded host a spinning thread that used up its share waits a whole scheduling
// round (tens of milliseconds at a load of 10 on 2 cores) to notice its deadline passed.
class SimulatedCores {
 public:
  explicit SimulatedCores(int cores) : free_(cores) {}
  // Blocks until `n` cores are free, then takes them. `n` must not exceed the machine's cores.
  void acquire(int n);
  void release(int n);

 private:
  std::mutex mu_;
  std::condition_variable freed_;
  int free_;
};

struct SimulatedBackendOptions {
  std::string name;  // the backend's name and its kernels' runtime module
  int cores = 1;     // cores the kernel's thread team keeps busy
  double busy_ms = 1;
};

// A backend claiming every f32 Relu and Sigmoid node. Each kernel is one task that computes the
// node's output, then holds `options.cores` of `machine`'s cores for `busy_ms`. `machine` is
// borrowed and must outlive the backend's kernels.
std::unique_ptr<Backend> make_simulated_backend(SimulatedBackendOptions options,
                                                SimulatedCores* machine);

// x f32[64x64] -> Relu ("left") and Sigmoid ("right"), both graph outputs: two independent
// branches of one kernel each.
Graph two_branch_graph(const Context& ctx);

}  // namespace collage::testing
