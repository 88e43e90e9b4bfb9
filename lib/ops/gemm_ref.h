// Single-threaded reference GEMM shared by Conv, ConvTranspose, MatMul and Gemm kernels.
#pragma once

#include <cstdint>

namespace collage::ops {

// A read-only row-major matrix operand. Element (i, j) of the operand as used in the product is
// data[i * ld + j], or data[j * ld + i] when `transposed` (the stored matrix is the transpose).
struct MatrixRef {
  const float* data = nullptr;
  int64_t ld = 0;  // row stride of the stored matrix, in elements
  bool transposed = false;
};

// C = alpha * A * B + beta * C, with A m x k, B k x n and C m x n (row stride ldc).
// beta == 0 overwrites C without reading it (NaNs in C do not propagate). The loops are
// cache-blocked with packed panels and a register-tiled micro-kernel that the compiler
// vectorises; results do not depend on the blocking beyond float rounding order.
void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float beta,
              float* c, int64_t ldc);

}  // namespace collage::ops
