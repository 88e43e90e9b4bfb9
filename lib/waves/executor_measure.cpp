// measure_executors: alternating whole runs of the sequential and the wave executor, or of two
// wave schedules; the choice.
#include "waves/executor_measure.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "collage/thread_pool.h"
#include "core/parallel_ranges.h"
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

// Runs `a` and `b` `warmup` times untimed, then in pairs until `runs` pairs or max_ms, the order
// within a pair alternating; their times, the median ratio b / a and how often b was faster.
template <typename A, typename B>
absl::StatusOr<ScheduleTimes> alternate(A&& a, B&& b, FirstError& error,
                                        const ExecutorMeasureOptions& options) {
  auto time_ms = [](auto&& fn) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  std::vector<double> a_ms, b_ms, ratio;
  const auto start = std::chrono::steady_clock::now();
  ScheduleTimes out;
  for (int i = 0; i < options.warmup + std::max(options.runs, 1); ++i) {
    const bool timed = i >= options.warmup;
    if (timed && static_cast<int>(a_ms.size()) >= std::max(options.min_runs, 1) &&
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count() > options.max_ms)
      break;
    double ta = 0, tb = 0;
    if (i % 2 == 0) {
      ta = time_ms(a);
      tb = time_ms(b);
    } else {
      tb = time_ms(b);
      ta = time_ms(a);
    }
    if (!error.status.ok()) return error.status;
    if (!timed) continue;
    a_ms.push_back(ta);
    b_ms.push_back(tb);
    ratio.push_back(tb / std::max(ta, 1e-9));
    out.second_faster += tb < ta;
  }
  out.first_ms = median(a_ms);
  out.second_ms = median(b_ms);
  out.pairs = static_cast<int>(a_ms.size());
  out.second_ratio = median(ratio);
  return out;
}

// The WaveRunner entry that runs chunk `chunk` of kernel `kernel` as `schedule` says.
WaveRunner::EntryFn wave_entry(const std::vector<BoundKernel>& kernels,
                               const WaveSchedule& schedule, FirstError& error) {
  return [&kernels, &schedule, &error](uint32_t kernel, uint32_t chunk) {
    const BoundKernel& k = kernels[kernel];
    const auto [begin, end] =
        chunk_range(k.kernel->task_count(), schedule.chunks[kernel], chunk);
    const int32_t threads =
        schedule.threads.empty() ? 0 : static_cast<int32_t>(schedule.threads[kernel]);
    for (int32_t t = begin; t < end; ++t)
      error.add(threads ? k.kernel->run_task_threads(k.args.data(), t, threads)
                        : k.kernel->run_task(k.args.data(), t));
  };
}

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
      parallel_for_ranges(pool, n, [&](int64_t t) {
        error.add(k.kernel->run_task(k.args.data(), static_cast<int32_t>(t)));
      });
    }
  };
  const WaveRunner::EntryFn entry = wave_entry(kernels, schedule, error);
  auto waves = [&] { (void)runner.try_run(entry); };
  auto t = alternate(sequential, waves, error, options);
  if (!t.ok()) return t.status();
  ExecutorTimes out;
  out.sequential_ms = t->first_ms;
  out.waves_ms = t->second_ms;
  out.pairs = t->pairs;
  out.waves_ratio = t->second_ratio;
  out.waves_faster = t->second_faster;
  return out;
}

absl::StatusOr<ScheduleTimes> measure_wave_schedules(const std::vector<BoundKernel>& kernels,
                                                     const WaveSchedule& first,
                                                     const WaveSchedule& second,
                                                     const ExecutorMeasureOptions& options) {
  WaveRunner run_first(&first), run_second(&second);
  FirstError error;
  const WaveRunner::EntryFn first_entry = wave_entry(kernels, first, error);
  const WaveRunner::EntryFn second_entry = wave_entry(kernels, second, error);
  return alternate([&] { (void)run_first.try_run(first_entry); },
                   [&] { (void)run_second.try_run(second_entry); }, error, options);
}

bool waves_clearly_faster(const ExecutorTimes& times, double margin) {
  return times.pairs > 0 && times.waves_ratio <= 1 - margin &&
         3 * times.waves_faster >= 2 * times.pairs;
}

bool second_clearly_faster(const ScheduleTimes& times, double margin) {
  return times.pairs > 0 && times.second_ratio <= 1 - margin &&
         3 * times.second_faster >= 2 * times.pairs;
}

}  // namespace collage::waves
