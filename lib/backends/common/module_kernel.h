// A Kernel backed by a runtime module (include/collage/runtime_module.h): the compiler builds the
// kernel record, then instantiates it through the same module code the runtime uses, so what is
// measured at compile time is exactly what runs in an artifact.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/kernel.h"
#include "collage/runtime_module.h"

namespace collage {

// Instantiates `record` with `module` for the argument types of `group` (its inputs then its
// outputs). The record's constants are kept alive by the kernel. Errors carry the module's
// message.
absl::StatusOr<std::unique_ptr<Kernel>> make_module_kernel(const collage_rt_module_v1_t* module,
                                                           KernelRecord record, const Graph& group);

// The argument types of a standalone group graph: its inputs, then its outputs.
std::vector<TensorType> group_argument_types(const Graph& group);

// The runtime-module descriptor of `record` for the argument types of `group` (its inputs, then
// its outputs): what a module's kernel_create receives. It points into `record` and `group`,
// which must outlive it, and owns the descriptor arrays. desc() may be changed (tests feed
// modules damaged parameters through it).
class KernelDesc {
 public:
  KernelDesc(const KernelRecord& record, const Graph& group);
  KernelDesc(const KernelDesc&) = delete;
  KernelDesc& operator=(const KernelDesc&) = delete;
  collage_kernel_desc_t& desc() { return desc_; }
  // The str constants' collage_string_t arrays (which point into `record`), for whoever keeps
  // the kernel: desc() must not be used after this.
  std::vector<std::vector<collage_string_t>> take_string_views() {
    return std::move(string_views_);
  }

 private:
  std::vector<collage_tensor_desc_t> args_, consts_;
  std::vector<std::vector<collage_string_t>> string_views_;
  std::vector<const void*> ptrs_;
  collage_kernel_desc_t desc_{};
};

}  // namespace collage
