// The cuda backend (NVIDIA GPUs, f32): runs a group of nodes as one GPU program of the cuda
// runtime module (libcollage_rt_cuda): Conv (2-D, groups, dilation, symmetric padding, a
// following Relu fused) through cuDNN, MatMul (a 2-D B, or the same batch dimensions) and Gemm
// (transposes, alpha, a broadcast C) through cuBLAS, and elementwise operators (arithmetic with
// numpy broadcasting, activations) as generated kernels, with every value the group computes
// kept on the GPU and only its inputs and outputs copied. Candidates are chains of such nodes;
// what a group costs is measured with its copies, so placement weighs the transfers. Registered
// only where a CUDA device is usable; elsewhere the registry says why it is not.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/backend.h"

namespace collage {

inline constexpr std::string_view kCudaBackend = "cuda";

// A new cuda backend (name "cuda", device cuda) for device 0; FailedPrecondition, saying why,
// when there is no usable device.
absl::StatusOr<std::unique_ptr<Backend>> make_cuda_backend();

// Adds make_cuda_backend() to `registry`, or records why there is none (add_unavailable);
// AlreadyExists when "cuda" is registered.
absl::Status register_cuda_backend(BackendRegistry& registry);

}  // namespace collage
