// The Eigen backend (CPU, f32 only). Patterns, each followed by up to three fused elementwise
// steps (bias/residual Add, Sub, Mul, Div, Pow, PRelu with an operand that broadcasts into the
// result, and Relu, Sigmoid, Tanh, Gelu, Exp, Log, Sqrt, Reciprocal, Neg, Abs, Erf, LeakyRelu,
// HardSigmoid, HardSwish, Clip):
//   eigen.matmul       MatMul, 2-D, batched with numpy broadcasting, 1-D operands
//   eigen.gemm         Gemm with transA/transB, alpha, beta and a broadcast C
//   eigen.conv         Conv 1-D/2-D (im2col + GEMM per group; direct loop when depthwise), bias
//   eigen.elementwise  any of the elementwise operators above, numpy broadcasting
// and, without epilogue, eigen.reduce (ReduceSum/Mean/Max over adjacent axes) and eigen.softmax
// (Softmax/LogSoftmax over any axis). Kernels run through the Eigen runtime module
// (libcollage_rt_eigen), whose code is linked in, so the compiler runs what an artifact runs.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "collage/backend.h"

namespace collage {

inline constexpr std::string_view kEigenBackend = "eigen";

// A new Eigen backend (name "eigen", device cpu).
std::unique_ptr<Backend> make_eigen_backend();
// Adds make_eigen_backend() to `registry`; AlreadyExists when "eigen" is registered.
absl::Status register_eigen_backend(BackendRegistry& registry);

}  // namespace collage
