// CUDA C code generation: a loop-IR kernel whose loops are bound to blockIdx/threadIdx becomes one
// `extern "C" __global__` function plus the launch configuration its bindings imply.
//
// Kernel ABI (every generated kernel):
//
//   extern "C" __global__ void name(T0* __restrict__ p0, T1* __restrict__ p1, ...);
//
// One typed pointer per PrimFunc parameter, in parameter order, each to a dense row-major device
// buffer of the parameter's shape (f32 `float`, i8 `signed char`, i32 `int`, i64 `long long`,
// bool `bool`, f16/bf16 `unsigned short` words). Buffers must not overlap and must be 16-byte
// aligned (cudaMalloc gives 256), because vectorized loops use 16-byte loads. Launch with
// `grid` x `block` threads as returned; `static_shared_bytes` is already declared in the kernel.
//
// How the loop IR maps to CUDA:
// - Index arithmetic (i64 in the loop IR) is done in 32-bit `int` when that cannot overflow: no
//   i64 buffers, no float-to-i64 conversions, and buffers, loop extents and i64 constants all
//   below 2^30. Otherwise it is done in `long long`.
// - A loop bound to "blockIdx.x" (...) is the block index; one bound to "threadIdx.x" the thread
//   index. The launch dimension of a tag is the largest extent bound to it; a loop whose extent is
//   smaller runs under `if (threadIdx.x < extent)`. A threadIdx loop may be nested inside another
//   loop bound to the same tag (a stage that the threads of a block compute together, e.g. a tile
//   staged in shared memory); both name the same hardware index.
// - Storage: a local allocation stored to under a threadIdx loop opened inside the allocation is
//   written by the threads together and becomes `__shared__`; any other local allocation is
//   private to each thread (registers / local memory).
// - Synchronisation: a statement that writes shared memory (or a parameter the kernel also reads)
//   is surrounded by `__syncthreads()`; such a statement must not sit under a condition that
//   depends on the thread index. Stores to shared memory or parameters outside the threadIdx loops
//   of some dimension are done by thread 0 of that dimension only.
// - A serial reduction loop of at most 32 iterations outside every threadIdx.x loop
//   (`for t: acc[i] = acc[i] + f(t)` with + / max / min, i not using t) runs as a warp reduction:
//   lane t computes f(t), then a __shfl_xor_sync butterfly combines the lanes. It needs
//   blockDim.x to be a multiple of 32; otherwise the loop stays serial.
// - A vectorized loop of 2 or 4 f32 lanes whose body is one store, contiguous in the loop
//   variable and 2/4-element aligned, loads and stores float2/float4 where its operands are
//   contiguous and aligned too; other vectorized and unrolled loops become `#pragma unroll` loops.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/loop_ir.h"

namespace collage::codegen::cuda {

struct LaunchConfig {
  std::array<int64_t, 3> grid{1, 1, 1};   // blocks per grid (x, y, z)
  std::array<int64_t, 3> block{1, 1, 1};  // threads per block (x, y, z)
  int64_t static_shared_bytes = 0;        // __shared__ memory the kernel declares
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

// One kernel parameter: a dense row-major device buffer.
struct KernelParam {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  size_t bytes() const;  // elements * dtype_size
};

struct CudaKernel {
  std::string name;                 // the __global__ function's name (the PrimFunc's)
  std::vector<KernelParam> params;  // in calling order
  std::string source;               // a complete CUDA C++ translation unit (no #include needed)
  LaunchConfig launch;
};

// Generates the CUDA source of `f`. Errors (InvalidArgument, naming the kernel and loop): loop IR
// a GPU kernel cannot have — a `parallel` loop (bind it instead), no loop bound to a GPU index, a
// bound loop with a non-constant extent or non-zero minimum, blockIdx loops nested in threadIdx or
// serial loops or in each other with the same tag, a nested threadIdx loop whose body uses the
// enclosing loop bound to the same tag, a shared buffer whose stores use a thread index bound
// outside its allocation, a barrier under a thread-dependent condition, more than
// 1024 threads per block or 48 KiB of static shared memory, and any loop IR that verify() rejects.
absl::StatusOr<CudaKernel> generate_cuda(const te::PrimFunc& f);

// The CUDA C identifier for a dtype's element ("float", "long long", ...).
std::string_view cuda_type_name(DType t);

}  // namespace collage::codegen::cuda
