// The generated kernels of the cuda backend: an elementwise operator's tensor expression (the
// same as the native backend's, from lib/te_ops) scheduled by gpu_elementwise, a numpy broadcast
// of one value into another's shape, and their NVRTC compilation.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "codegen/cuda/gpu_schedules.h"
#include "codegen/cuda/launch_step.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "collage/graph.h"

namespace collage::cuda_backend {

// Whether the cuda backend runs `op` as a generated elementwise kernel.
bool is_elementwise_op(const std::string& op);

// `node` as one kernel; arguments: its inputs (absent optional ones left out), then its output.
absl::StatusOr<codegen::cuda::GpuKernelDef> elementwise_kernel(const Graph& g, const Node& node);

// A kernel writing value `from` numpy-broadcast into the shape of `to`; arguments: from, to.
absl::StatusOr<codegen::cuda::GpuKernelDef> broadcast_kernel(const Graph& g, const Node& node,
                                                             ValueId from, ValueId to);

// Lowers, generates and compiles `def` as kernel `name` for sm_<arch> (NVRTC's on-disk cache
// keeps the image between compiles).
absl::StatusOr<codegen::cuda::CompiledCuda> compile_kernel(const codegen::cuda::GpuKernelDef& def,
                                                           const std::string& name, int arch);

}  // namespace collage::cuda_backend
