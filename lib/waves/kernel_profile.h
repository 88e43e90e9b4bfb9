// Compile-time profiling of kernel tasks (Rammer's compile-time profiler): every task of a
// kernel timed alone on the calling thread, over buffers of the kernel's argument types.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "collage/kernel.h"
#include "collage/tensor.h"
#include "waves/wave_scheduler.h"

namespace collage::waves {

// Argument buffers of a kernel: inputs filled with deterministic values (floats in [-1, 1),
// integers and booleans zero, a valid index everywhere), outputs zeroed. Keeps the tensors and
// the pointer array the kernel takes.
struct KernelBuffers {
  std::vector<Tensor> tensors;
  std::vector<void*> pointers;
};
KernelBuffers make_kernel_buffers(const std::vector<TensorType>& arg_types, size_t num_inputs);

// A kernel whose tasks keep more than this many cores busy per core of wall time (process CPU
// time over wall time while it is profiled) parallelises inside: KernelProfile::exclusive.
inline constexpr double kExclusiveCpuRatio = 1.5;

// Runs every task once untimed, then times each task `repeats` times on the calling thread and
// keeps its median (microseconds); marks the kernel exclusive when it keeps several cores busy
// or has a thread team (Kernel::has_thread_team), whatever its profile. Such a kernel is then
// timed the same way pinned, its team limited to the calling thread, for
// KernelProfile::pinned_us, unless its outputs then differ by a bit. `buffers` are the kernel's
// arguments (make_kernel_buffers), the first `num_inputs` its inputs. Errors are the kernel's.
absl::StatusOr<KernelProfile> profile_kernel(Kernel& kernel, KernelBuffers& buffers,
                                             size_t num_inputs, int repeats = 5);

}  // namespace collage::waves
