// profile_kernel and the argument buffers it runs on.
#include "waves/kernel_profile.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>

namespace collage::waves {

KernelBuffers make_kernel_buffers(const std::vector<TensorType>& arg_types, size_t num_inputs) {
  KernelBuffers b;
  for (size_t a = 0; a < arg_types.size(); ++a) {
    Tensor& t = b.tensors.emplace_back(arg_types[a].dtype, arg_types[a].shape);
    if (t.bytes()) std::memset(t.raw(), 0, t.bytes());
    if (a < num_inputs && t.dtype() == DType::f32)
      for (int64_t i = 0; i < t.numel(); ++i)
        t.data<float>()[i] = static_cast<float>((i * 7919 + a * 104729) % 2000) / 1000.f - 1.f;
    b.pointers.push_back(t.raw());
  }
  return b;
}

namespace {

// CPU time of the whole process (every thread), microseconds.
double process_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

}  // namespace

absl::StatusOr<KernelProfile> profile_kernel(Kernel& kernel, void* const* args, int repeats) {
  const int32_t n = kernel.task_count();
  for (int32_t t = 0; t < n; ++t)
    if (absl::Status s = kernel.run_task(args, t); !s.ok()) return s;
  KernelProfile p;
  std::vector<double> samples;
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_us();
  for (int32_t t = 0; t < n; ++t) {
    samples.clear();
    for (int r = 0; r < std::max(repeats, 1); ++r) {
      const auto start = std::chrono::steady_clock::now();
      if (absl::Status s = kernel.run_task(args, t); !s.ok()) return s;
      samples.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
    p.task_us.push_back(samples[samples.size() / 2]);
  }
  const double cpu_us = process_cpu_us() - cpu_start;
  const double wall_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - wall_start)
          .count();
  p.exclusive = cpu_us > kExclusiveCpuRatio * wall_us;
  return p;
}

}  // namespace collage::waves
