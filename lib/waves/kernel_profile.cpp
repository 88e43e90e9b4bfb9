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

struct TaskTimes {
  std::vector<double> us;  // per task, median
  bool parallel = false;   // kept several cores busy
};

// Every task once untimed, then each `repeats` times; `threads` > 0 limits the kernel's own team.
absl::StatusOr<TaskTimes> time_tasks(Kernel& kernel, void* const* args, int repeats,
                                     int32_t threads) {
  auto run = [&](int32_t t) {
    return threads ? kernel.run_task_threads(args, t, threads) : kernel.run_task(args, t);
  };
  const int32_t n = kernel.task_count();
  for (int32_t t = 0; t < n; ++t)
    if (absl::Status s = run(t); !s.ok()) return s;
  TaskTimes times;
  std::vector<double> samples;
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_us();
  for (int32_t t = 0; t < n; ++t) {
    samples.clear();
    for (int r = 0; r < std::max(repeats, 1); ++r) {
      const auto start = std::chrono::steady_clock::now();
      if (absl::Status s = run(t); !s.ok()) return s;
      samples.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
    times.us.push_back(samples[samples.size() / 2]);
  }
  const double cpu_us = process_cpu_us() - cpu_start;
  const double wall_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - wall_start)
          .count();
  times.parallel = cpu_us > kExclusiveCpuRatio * wall_us;
  return times;
}

}  // namespace

absl::StatusOr<KernelProfile> profile_kernel(Kernel& kernel, KernelBuffers& buffers,
                                             size_t num_inputs, int repeats) {
  void* const* args = buffers.pointers.data();
  auto own = time_tasks(kernel, args, repeats, /*threads=*/0);
  if (!own.ok()) return own.status();
  KernelProfile p;
  p.task_us = std::move(own->us);
  // A kernel with its own thread team runs exclusive (every worker to itself) or pinned, never
  // beside another with its whole team, whatever its profile: on a busy machine the team rarely
  // has its cores together and looks serial, and beside another worker it then waits at every
  // fork and join for a core (oneDNN's OpenMP kernels of BERT-base ran hundreds of times slower
  // so, and one end-to-end evaluation took minutes).
  p.exclusive = own->parallel || kernel.has_thread_team();
  if (!kernel.has_thread_team()) return p;
  // The pinned variant, its team limited to the calling thread; profiled even when the team did
  // not look parallel: on a loaded machine its threads are rarely on cores together, and every
  // fork and join then waits for the scheduler (measured: a 30 us oneDNN pooling took 16 ms).
  std::vector<Tensor> team_outputs;
  for (size_t a = num_inputs; a < buffers.tensors.size(); ++a)
    team_outputs.push_back(buffers.tensors[a].clone());
  auto pinned = time_tasks(kernel, args, repeats, /*threads=*/1);
  if (!pinned.ok()) return pinned.status();
  // A library may split a reduction among its threads, and one thread then rounds differently:
  // such a variant would make the wave executor's outputs differ from the sequential one's.
  for (size_t a = num_inputs; a < buffers.tensors.size(); ++a)
    if (!buffers.tensors[a].identical(team_outputs[a - num_inputs])) return p;
  p.pinned_us = std::move(pinned->us);
  return p;
}

}  // namespace collage::waves
