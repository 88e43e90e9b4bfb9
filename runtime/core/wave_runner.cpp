// WaveRunner: the workers' loop, step-counter waits and the per-run timing.
#include "wave_runner.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COLLAGE_WAVES_PAUSE() _mm_pause()
#else
#define COLLAGE_WAVES_PAUSE() ((void)0)
#endif

namespace collage::waves {
namespace {

using Clock = std::chrono::steady_clock;
// Polls before a waiter sleeps on the counter (futex): short, because the machine may have
// fewer cores than workers and a spinning waiter then steals the core its producer needs.
constexpr int kSpins = 512;
// An idle worker polls for the next run this long before it sleeps, so that back-to-back runs
// do not pay a thread wake-up each (OpenMP runtimes spin for a similar time).
constexpr auto kIdleSpin = std::chrono::microseconds(100);

uint64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

// Waits until `a` differs from `old` (spin, then sleep); returns the new value (acquire).
uint32_t await_change(const std::atomic<uint32_t>& a, uint32_t old) {
  for (int i = 0; i < kSpins; ++i) {
    const uint32_t v = a.load(std::memory_order_acquire);
    if (v != old) return v;
    COLLAGE_WAVES_PAUSE();
  }
  for (;;) {
    a.wait(old, std::memory_order_acquire);
    const uint32_t v = a.load(std::memory_order_acquire);
    if (v != old) return v;
  }
}

}  // namespace

WaveRunner::WaveRunner(const WaveSchedule* schedule)
    : schedule_(schedule),
      counters_(schedule->workers.size()),
      times_(schedule->workers.size()) {
  for (uint32_t w = 1; w < schedule->workers.size(); ++w)
    threads_.emplace_back([this, w] { worker_loop(w); });
}

WaveRunner::~WaveRunner() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WaveRunner::wait_for(const WaveWait& wait, uint64_t* wait_ns) {
  const std::atomic<uint32_t>& done = counters_[wait.worker].done;
  uint32_t v = done.load(std::memory_order_acquire);
  if (v >= wait.count) return;
  const Clock::time_point start = Clock::now();
  while (v < wait.count) v = await_change(done, v);
  *wait_ns += ns_between(start, Clock::now());
}

WaveRunner::WorkerTimes WaveRunner::run_list(uint32_t worker) {
  const WorkerList& list = schedule_->workers[worker];
  std::atomic<uint32_t>& done = counters_[worker].done;
  WorkerTimes t;
  const Clock::time_point begin = Clock::now();
  t.wake_ns = ns_between(run_start_, begin);
  for (uint32_t i = 0; i < list.entries.size(); ++i) {
    const WaveEntry& e = list.entries[i];
    for (uint32_t j = e.wait_begin; j < e.wait_end; ++j) wait_for(list.waits[j], &t.wait_ns);
    const Clock::time_point start = Clock::now();
    (*fn_)(e.kernel, e.chunk);
    t.task_ns += ns_between(start, Clock::now());
    // Release: everything the entry wrote is visible to a worker that acquires this count.
    done.store(i + 1, std::memory_order_release);
    done.notify_all();
  }
  t.busy_ns = ns_between(begin, Clock::now());
  return t;
}

void WaveRunner::worker_loop(uint32_t worker) {
  uint32_t seen = 0;
  for (;;) {
    const Clock::time_point idle_since = Clock::now();
    while (generation_.load(std::memory_order_acquire) == seen &&
           Clock::now() - idle_since < kIdleSpin)
      for (int i = 0; i < 64; ++i) COLLAGE_WAVES_PAUSE();
    seen = await_change(generation_, seen);
    if (stop_.load(std::memory_order_acquire)) return;
    times_[worker] = run_list(worker);
    finished_.fetch_add(1, std::memory_order_acq_rel);
    finished_.notify_all();
  }
}

bool WaveRunner::try_run(const EntryFn& fn) {
  std::unique_lock<std::mutex> lock(run_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  // Every worker finished the previous run before it returned, so nobody reads the counters.
  for (Counter& c : counters_) c.done.store(0, std::memory_order_relaxed);
  finished_.store(0, std::memory_order_relaxed);
  fn_ = &fn;
  run_start_ = Clock::now();
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  times_[0] = run_list(0);
  const uint32_t others = static_cast<uint32_t>(threads_.size());
  for (uint32_t f = finished_.load(std::memory_order_acquire); f < others;)
    f = await_change(finished_, f);
  const uint64_t wall = ns_between(run_start_, Clock::now());
  WorkerTimes sum;
  for (const WorkerTimes& t : times_) {
    sum.task_ns += t.task_ns;
    sum.wait_ns += t.wait_ns;
    sum.busy_ns += t.busy_ns;
    sum.wake_ns += t.wake_ns;
  }
  const uint64_t n = times_.size();
  std::lock_guard<std::mutex> stats_lock(stats_mu_);
  ++stats_.runs;
  stats_.wall_ns += wall;
  stats_.task_ns += sum.task_ns / n;
  stats_.wait_ns += sum.wait_ns / n;
  stats_.wake_ns += sum.wake_ns / n;
  const uint64_t accounted = sum.task_ns + sum.wait_ns;
  stats_.overhead_ns += (sum.busy_ns > accounted ? sum.busy_ns - accounted : 0) / n;
  return true;
}

WaveRunStats WaveRunner::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

}  // namespace collage::waves
