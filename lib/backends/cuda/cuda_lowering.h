// Lowering of a group of graph nodes to one GPU program (runtime/modules/cuda/cuda_program.h):
// convolutions to cuDNN steps (a following Relu fused), MatMul and Gemm to cuBLAS steps,
// elementwise operators to generated kernels (their tensor expressions scheduled by
// codegen/cuda's gpu_elementwise and compiled by NVRTC). The group's tensors live in one arena:
// its arguments (inputs, then outputs) first, then its constants, then the values computed
// inside it, which never leave the GPU. The same code answers the backend's checks (without
// compiling) and builds kernels, so a group that passes its check builds.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/tensor.h"
#include "cuda_program.h"

namespace collage::cuda_backend {

// How the lowering runs what it can run two ways.
struct LoweringChoices {
  // Depthwise convolutions (one filter per channel, square stride and padding, no dilation) as
  // the generated kernel (gpu_depthwise_conv2d, then a kernel for the bias and relu) instead of
  // cuDNN: faster on an H200 at MobileNet's sizes, slower where cuDNN fuses the epilogue.
  bool generated_depthwise = false;
};

struct LoweredProgram {
  rt_cuda::GpuProgram program;
  std::vector<Tensor> constants;  // in the order of program.constant_offsets
  // The depthwise convolutions that LoweringChoices::generated_depthwise decides, as a key for
  // the measured choice ("n,c,h,w,khxkw,stride,pad,has_bias,relu;" each, the flags true or
  // false); empty when there are none.
  std::string depthwise_key;
};

// Whether the cuda backend runs `node` of g at all (operator, dtypes, attributes); the reason
// when not. Cheap: no tensor expression is built.
absl::Status check_node(const Graph& g, const Node& node);

// Lowers every node of the standalone group graph `group` (extract_subgraph's form), in order.
// `compile` false: the elementwise kernels are defined and scheduled but not compiled (a check).
// `arch`: the compute capability the kernels are compiled for. Errors name the node and why.
absl::StatusOr<LoweredProgram> lower_group(const Graph& group, bool compile, int arch,
                                           const LoweringChoices& choices = {});

}  // namespace collage::cuda_backend
