// The library steps of a GpuProgram: GEMMs through cuBLAS and convolutions through cuDNN, each
// library loaded at run time (dlopen), so that the module loads on machines without them and a
// program that uses them reports the missing library by name.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "cuda_program.h"

namespace collage::rt_cuda {

// A cuBLAS handle bound to one stream, with its own workspace (so that its calls can be captured
// into a CUDA graph), TF32 and other reduced-precision math off.
class CublasGemms {
 public:
  // Loads libcublas.so.<major of the headers>, creates the handle on `stream` (in the current
  // context). Empty on success.
  static std::string create(CUstream stream, std::unique_ptr<CublasGemms>* out);
  ~CublasGemms();
  // Enqueues `step` (row-major, see GemmStep) on the stream, operands at `arena` + offsets.
  std::string enqueue(const GemmStep& step, CUdeviceptr arena) const;
  // "cublas 13.1.0"
  std::string version() const;

 private:
  struct Impl;
  explicit CublasGemms(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A cuDNN handle bound to one stream and the convolutions planned on it.
class CudnnConvolutions {
 public:
  // Loads libcudnn.so.<major of the headers>, creates the handle on `stream`. Empty on success.
  static std::string create(CUstream stream, std::unique_ptr<CudnnConvolutions>* out);
  ~CudnnConvolutions();
  // Plans `step`: tensor, filter and convolution descriptors, the algorithm (cuDNN's heuristics'
  // candidates, confirmed by timing them on the arena's buffers, which it may overwrite), its
  // workspace. `*index` is the plan's number for enqueue(). Empty on success.
  std::string add(const ConvStep& step, CUdeviceptr arena, size_t* index);
  // Enqueues plan `index` on the stream (bias and activation fused where the step has them).
  std::string enqueue(size_t index, CUdeviceptr arena) const;
  // "conv 0: IMPLICIT_PRECOMP_GEMM, workspace 0 B"
  std::string describe(size_t index) const;
  // "cudnn 9.19.0"
  std::string version() const;

 private:
  struct Impl;
  explicit CudnnConvolutions(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace collage::rt_cuda
