// measure_executors: alternating whole runs of the sequential and the wave executor; the choice.
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
                                                const WaveSchedule& schedule,
                                                const ExecutorMeasureOptions& options) {
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
  std::vector<double> seq_ms, wave_ms, ratio;
  const auto start = std::chrono::steady_clock::now();
  ExecutorTimes out;
  for (int i = 0; i < options.warmup + std::max(options.runs, 1); ++i) {
    const bool timed = i >= options.warmup;
    if (timed && static_cast<int>(seq_ms.size()) >= std::max(options.min_runs, 1) &&
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count() > options.max_ms)
      break;
    double s = 0, w = 0;
    if (i % 2 == 0) {
      s = time_ms(sequential);
      w = time_ms(waves);
    } else {
      w = time_ms(waves);
      s = time_ms(sequential);
    }
    if (!error.status.ok()) return error.status;
    if (!timed) continue;
    seq_ms.push_back(s);
    wave_ms.push_back(w);
    ratio.push_back(w / std::max(s, 1e-9));
    out.waves_faster += w < s;
  }
  out.sequential_ms = median(seq_ms);
  out.waves_ms = median(wave_ms);
  out.pairs = static_cast<int>(seq_ms.size());
  out.waves_ratio = median(ratio);
  return out;
}

bool waves_clearly_faster(const ExecutorTimes& times, double margin) {
  return times.pairs > 0 && times.waves_ratio <= 1 - margin &&
         3 * times.waves_faster >= 2 * times.pairs;
}

}  // namespace collage::waves
