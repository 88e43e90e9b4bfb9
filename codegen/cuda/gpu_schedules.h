// GPU schedules for tensor expressions: (batched) matmul with shared-memory tiles and register
// blocking, elementwise chains (intermediates inlined, float4 where contiguous), row reductions,
// softmax and layer norm with warp-shuffle reductions. Each returns the schedule and the kernel's
// arguments; lower_gpu() turns it into loop IR for generate_cuda().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/schedule.h"

namespace collage::codegen::cuda {

struct GpuKernelDef {
  te::Schedule schedule;
  std::vector<te::Tensor> args;  // kernel parameters in order (inputs, then outputs)
};

// C[m, n] = sum_k A[m, k] * B[k, n] (f32). Each block computes a block_m x block_n tile of C
// with (block_m / thread_m) x (block_n / thread_n) threads; each thread accumulates a
// thread_m x thread_n tile in registers while the block stages block_m x block_k of A and
// block_k x block_n of B in shared memory per step of k.
struct MatmulTiling {
  int64_t block_m = 64, block_n = 64, block_k = 8;
  int64_t thread_m = 4, thread_n = 4;
};
// Arguments: A, B, C. InvalidArgument for non-positive sizes or a tiling whose block sizes are
// not multiples of the thread tile.
absl::StatusOr<GpuKernelDef> gpu_matmul(int64_t m, int64_t n, int64_t k,
                                        const MatmulTiling& tiling = {});

// C[i, j] = epilogue(sum_k A[i, k] * B[k, j], i, j): a matmul whose elementwise epilogue (bias,
// activation, residual, ...) is computed in registers right before the store. The epilogue may
// read `extra_inputs` (placeholders the caller made) and must give f32. Arguments: A, B,
// extra_inputs..., C.
using DenseEpilogue = std::function<te::Expr(te::Expr acc, te::Var i, te::Var j)>;
absl::StatusOr<GpuKernelDef> gpu_dense(int64_t m, int64_t n, int64_t k,
                                       const std::vector<te::Tensor>& extra_inputs,
                                       const DenseEpilogue& epilogue,
                                       const MatmulTiling& tiling = {});

// C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] (f32): gpu_matmul's schedule per matrix, the batch
// index bound to blockIdx.z. Arguments: A, B, C.
absl::StatusOr<GpuKernelDef> gpu_batch_matmul(int64_t batch, int64_t m, int64_t n, int64_t k,
                                              const MatmulTiling& tiling = {});

// A 2-D convolution (NCHW, groups 1, square stride and symmetric zero padding).
struct Conv2dShape {
  int64_t batch = 1, in_channels = 1, height = 1, width = 1;
  int64_t out_channels = 1, kernel_h = 1, kernel_w = 1;
  int64_t stride = 1, pad = 0;
  int64_t out_height() const { return (height + 2 * pad - kernel_h) / stride + 1; }
  int64_t out_width() const { return (width + 2 * pad - kernel_w) / stride + 1; }
};
// Convolution as an implicit GEMM per image: [out_channels, C*kh*kw] weights times the im2col
// view of the image, gathered straight into the shared-memory tile (no im2col buffer), with
// gpu_matmul's tiling. An epilogue, when given, is applied per output element as in gpu_dense
// with i = the output channel and j = the pixel (oh * ow index), e.g. bias[i] and relu.
// Arguments: X [N, C, H, W], W [O, C, kh, kw], extra_inputs..., Y [N, O, oh * ow] (the bytes of
// NCHW [N, O, oh, ow]). InvalidArgument for non-positive sizes or an empty output.
absl::StatusOr<GpuKernelDef> gpu_conv2d(const Conv2dShape& shape,
                                        const std::vector<te::Tensor>& extra_inputs = {},
                                        const DenseEpilogue& epilogue = nullptr,
                                        const MatmulTiling& tiling = {});

// Depthwise convolution (NCHW, one kh x kw filter per channel, multiplier 1): each thread
// computes one output element, accumulating in a register over the (unrolled) filter window.
// Arguments: X [N, C, H, W], W [C, 1, kh, kw], Y [N, C, oh, ow]. `shape.out_channels` must equal
// `shape.in_channels`.
absl::StatusOr<GpuKernelDef> gpu_depthwise_conv2d(const Conv2dShape& shape, int64_t threads = 256);

// `out` and every compute it reads that is not in `inputs` must be elementwise (each element of
// `out` reads its inputs at its own coordinates or broadcasts); the intermediates are inlined and
// the output's elements are spread over blocks of `threads` threads, 4 per thread (float4) when
// the innermost dimension allows. Arguments: inputs, then out.
absl::StatusOr<GpuKernelDef> gpu_elementwise(const te::Tensor& out,
                                             const std::vector<te::Tensor>& inputs,
                                             int64_t threads = 256);

// out[r] = op over c of X[r, c] (f32): one block of 32 threads per row; each thread reduces a
// strided slice, then a warp shuffle combines the 32 partial results. Arguments: X, out.
absl::StatusOr<GpuKernelDef> gpu_row_reduce(int64_t rows, int64_t cols, te::ReduceOp op);

// Y = softmax(X) along the last axis of X[rows, cols] (f32). Arguments: X, row_max (a [rows]
// workspace the kernel writes), Y. Row maximum and sum are warp reductions.
absl::StatusOr<GpuKernelDef> gpu_softmax(int64_t rows, int64_t cols);

// Y = (X - mean) / sqrt(var + epsilon) * gamma + beta along the last axis of X[rows, cols]
// (f32, biased variance). Arguments: X, gamma [cols], beta [cols], row_sum (a [rows] workspace
// the kernel writes), Y. Both statistics are warp reductions.
absl::StatusOr<GpuKernelDef> gpu_layer_norm(int64_t rows, int64_t cols, float epsilon);

// te::lower() of the definition.
absl::StatusOr<te::PrimFunc> lower_gpu(const GpuKernelDef& def, const std::string& name);

}  // namespace collage::codegen::cuda
