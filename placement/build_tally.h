// BuildTally: the wall time a compile spends building kernels (Backend::build), by step and
// backend, so that a compile report can say where the build time went (LLVM for native kernels,
// OpenVINO's compile, oneDNN's primitive creation) and in which step.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "collage/placement.h"

namespace collage {

// Thread-safe: builds may run on several threads.
class BuildTally {
 public:
  // The step later builds without one of their own are counted in ("graph-level", "build", ...).
  void set_step(std::string step);
  // One build of `backend` took `ms` of wall time, in `step` (the current step when empty).
  void add(const std::string& backend, double ms, const std::string& step = "");
  // Every (step, backend) with builds, in the order the steps first had one, then by backend.
  std::vector<KernelBuilds> entries() const;

 private:
  mutable std::mutex mu_;
  std::string step_;
  std::vector<std::string> steps_;  // in first-build order
  std::map<std::pair<std::string, std::string>, KernelBuilds> by_;  // by (step, backend)
};

// `inner`'s backends, each wrapped so that its builds are counted in `tally` (both borrowed,
// outliving the registry). The wrappers build, take layouts and run dynamic shapes as their
// backend does; they offer no candidates (for building placed groups, not for placing them).
BackendRegistry tallied_backends(const BackendRegistry& inner, BuildTally& tally);

}  // namespace collage
