// Estimates of what measuring would tell, for a compile whose budget is spent: a kernel's time
// from its work at the rate kernels of its backend measured in this compile ran, and the wall time
// that building and timing a kernel costs, so that one is not started when it cannot finish in
// time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/graph.h"

namespace collage {

// The work of running a group once: its FLOPs (node_flops) and the bytes of the values it reads
// and writes (inputs, outputs and constants).
struct GroupWork {
  double flops = 0;
  double bytes = 0;
  size_t nodes = 0;
  bool anchored = false;  // a convolution or a matrix product among its nodes (is_contraction)
};
// Whether `node` is a convolution or a matrix product, whose code dominates a kernel's build.
bool is_contraction(const Node& node);
GroupWork group_work(const Graph& group);

// Rates observed per backend. Not thread-safe (the measurer runs on one thread).
class WorkEstimator {
 public:
  // A kernel of `backend` doing `work` ran in `run_ms`; building, warming and sampling it took
  // `job_ms` of wall time.
  void observe(const std::string& backend, const GroupWork& work, double run_ms, double job_ms);

  // The time one run of a kernel of `backend` doing `work` should take: its work at the rate of
  // the backend's measured kernels (all backends' when it has none; kDefaultWorkPerMs when none
  // is measured yet). Positive.
  double run_ms(const std::string& backend, const GroupWork& work) const;

  // The wall time building and timing a kernel of `backend` with `work.nodes` nodes should take:
  // the backend's mean per node so far times the node count; 0 before any was observed.
  double job_ms(const std::string& backend, const GroupWork& work) const;

  // A kernel of `backend` with `nodes` nodes took `ms` to build; `anchored`: its group holds a
  // contraction (GroupWork::anchored).
  void observe_build(const std::string& backend, size_t nodes, double ms, bool anchored = false);
  // The time building kernels of `backend` covering `nodes` nodes should take: the median of
  // the backend's build times per node so far (every backend's when it has none), its first
  // build left out once there are others (it pays for the backend's start: LLVM's, a
  // library's); the first build's time while it is the only one; while fewer than eight others
  // are, the smallest of their and the first build's times per node; 0 before any was
  // observed.
  double build_ms(const std::string& backend, size_t nodes) const;
  // The time building one kernel of `backend` with `nodes` nodes, anchored or not, should take:
  // once eight builds of the backend's kernels of that kind are seen and `nodes` is within the
  // node counts they had, their median (a native kernel's build is its convolution's code
  // whatever the epilogue: DenseNet-121's convolution groups of one to three nodes 0.25-0.35 s,
  // its other groups 0.06-0.11 s; per node, a convolution's epilogue doubled its estimate and a
  // three-node elementwise group took three times a convolution's rate); else build_ms.
  double kernel_build_ms(const std::string& backend, size_t nodes, bool anchored) const;

  // Work units a kernel gets through per millisecond before anything is measured: 2 GFLOP/s,
  // well below what a kernel of these backends reaches on one core, so that an estimate made
  // blind does not favour the kernel it makes up.
  static constexpr double kDefaultWorkPerMs = 2e6;
  // Work units a byte read or written counts for, beside one per FLOP: about what a core does
  // in arithmetic in the time it streams a byte from memory.
  static constexpr double kWorkPerByte = 4;

 private:
  struct Totals {
    double work = 0, run_ms = 0;      // of the kernels measured
    double nodes = 0, job_ms = 0;     // of the jobs run
  };
  static double units(const GroupWork& w) { return w.flops + kWorkPerByte * w.bytes; }
  std::map<std::string, Totals> by_backend_;
  struct Builds {
    size_t builds = 0;
    double first_ms = 0;         // the first build's time
    double first_rate = 0;       // ... per node
    std::vector<double> rates;   // the others' time per node, sorted
    struct Kind {
      std::vector<double> ms;  // builds' times, sorted
      size_t min_nodes = 0, max_nodes = 0;
    };
    Kind kinds[2];  // by GroupWork::anchored
  };
  std::map<std::string, Builds> builds_;
  Builds all_builds_;
  Totals all_;
};

}  // namespace collage
