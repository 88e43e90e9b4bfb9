// measure_executors: alternating whole runs of the sequential and the wave executor.
#include "waves/executor_measure.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "collage/thread_pool.h"
#include "wave_runner.h"

namespace collage::waves {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The first error of a run, from any thread.
struct FirstError {
  std::mutex mu;
  absl::Status status;
  void add(absl::Status s) {
    if (s.ok()) return;
    std::lock_guard<std::mutex> lock(mu);
    if (status.ok()) status = std::move(s);
  }
};

}  // namespace

absl::StatusOr<ExecutorTimes> measure_executors(const std::vector<BoundKernel>& kernels,
                                                const WaveSchedule& schedule, int runs,
                                                int warmup) {
  ThreadPool pool(static_cast<int>(schedule.workers.size()));
  WaveRunner runner(&schedule);
  FirstError error;
  auto sequential = [&] {
    for (const BoundKernel& k : kernels) {
      const int32_t n = k.kernel->task_count();
      if (n == 1) {
        error.add(k.kernel->run_task(k.args.data(), 0));
        continue;
      }
      pool.parallel_for(n, [&](int64_t t) {
        error.add(k.kernel->run_task(k.args.data(), static_cast<int32_t>(t)));
      });
    }
  };
  const WaveRunner::EntryFn entry = [&](uint32_t kernel, uint32_t chunk) {
    const BoundKernel& k = kernels[kernel];
    const auto [begin, end] =
        chunk_range(k.kernel->task_count(), schedule.chunks[kernel], chunk);
    const int32_t threads =
        schedule.threads.empty() ? 0 : static_cast<int32_t>(schedule.threads[kernel]);
    for (int32_t t = begin; t < end; ++t)
      error.add(threads ? k.kernel->run_task_threads(k.args.data(), t, threads)
                        : k.kernel->run_task(k.args.data(), t));
  };
  auto waves = [&] { (void)runner.try_run(entry); };
  auto time_ms = [](auto&& fn) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  std::vector<double> seq_ms, wave_ms;
  for (int i = 0; i < warmup + runs; ++i) {
    const double s = time_ms(sequential);
    const double w = time_ms(waves);
    if (!error.status.ok()) return error.status;
    if (i < warmup) continue;
    seq_ms.push_back(s);
    wave_ms.push_back(w);
  }
  return ExecutorTimes{median(seq_ms), median(wave_ms)};
}

}  // namespace collage::waves
