// WaveRunner: the workers' loop, step-counter waits and the per-run timing.
#include "wave_runner.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COLLAGE_WAVES_PAUSE() _mm_pause()
#else
#define COLLAGE_WAVES_PAUSE() ((void)0)
#endif

namespace collage::waves {
namespace {

using Clock = std::chrono::steady_clock;
// A waiter polls (pausing) for kWaitSpin, then polls yielding its core between polls until
// kWaitYield has passed, and only then sleeps on the counter (futex). Waking a sleeper costs its
// producer a system call, after which the producer often loses its core to the thread it woke,
// and the sleeper itself wakes tens of microseconds late; a yielding poll costs nothing when the
// machine has a core for every worker, and hands the core over when it has not.
constexpr auto kWaitSpin = std::chrono::microseconds(50);
constexpr auto kWaitYield = std::chrono::microseconds(1000);
// A wait helps the list it waits on once that list has been stalled between entries this long:
// about a thread's wake-up on an idle machine (where the schedule's placement should hold),
// far less than the time slice another process takes from a descheduled worker.
constexpr auto kHelpAfter = std::chrono::microseconds(50);
// An idle worker polls for the next run this long before it sleeps, so that back-to-back runs
// do not pay a thread wake-up each (OpenMP runtimes spin for a similar time).
constexpr auto kIdleSpin = std::chrono::microseconds(100);

uint64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              std::atomic<uint32_t>::is_always_lock_free);

// The futex calls themselves: std::atomic's wait spins and calls sched_yield first, which on a
// loaded machine can hand the core away for a whole time slice; our own spin comes before.
void futex_wait(std::atomic<uint32_t>& a, uint32_t old) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&a), FUTEX_WAIT_PRIVATE, old, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<uint32_t>& a) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&a), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr,
          0);
}

// Polls `ready` as said above (`spin`, then yielding until `spin + yield`); whether it held.
template <class Ready>
bool poll(Ready ready, Clock::duration spin, Clock::duration yield) {
  const Clock::time_point start = Clock::now();
  do {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      COLLAGE_WAVES_PAUSE();
    }
  } while (Clock::now() - start < spin);
  while (Clock::now() - start < spin + yield) {
    std::this_thread::yield();
    if (ready()) return true;
  }
  return false;
}

}  // namespace

// A writer's store (or add) and its load of `sleepers` are sequentially consistent, as are a
// waiter's increment of `sleepers` and its load of `value`: either the writer sees the increment
// (and, acquiring it, what the waiter parked before it) and wakes it, or the waiter's load sees
// the new value and it does not sleep.
void WaveRunner::add(Counter& c, uint32_t delta) {
  c.value.fetch_add(delta, std::memory_order_seq_cst);
  if (c.sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(c.value);
}

void WaveRunner::publish_step(uint32_t worker, uint32_t count) {
  Counter& c = counters_[worker];
  c.value.store(count, std::memory_order_seq_cst);
  if (c.sleepers.load(std::memory_order_seq_cst) == 0) return;
  for (const Parked& p : parked_)
    if (p.worker.load(std::memory_order_relaxed) == worker &&
        p.count.load(std::memory_order_relaxed) <= count) {
      futex_wake_all(c.value);
      return;
    }
}

uint32_t WaveRunner::await_change(Counter& c, uint32_t old, Clock::duration spin,
                                  Clock::duration yield) {
  uint32_t v = old;
  if (poll([&] { return (v = c.value.load(std::memory_order_acquire)) != old; }, spin, yield))
    return v;
  c.sleepers.fetch_add(1, std::memory_order_seq_cst);
  v = c.value.load(std::memory_order_seq_cst);
  while (v == old) {
    futex_wait(c.value, old);
    v = c.value.load(std::memory_order_acquire);
  }
  c.sleepers.fetch_sub(1, std::memory_order_relaxed);
  return v;
}

WaveRunner::WaveRunner(const WaveSchedule* schedule)
    : schedule_(schedule),
      counters_(schedule->workers.size()),
      parked_(schedule->workers.size()),
      times_(schedule->workers.size()) {
  for (uint32_t w = 1; w < schedule->workers.size(); ++w)
    threads_.emplace_back([this, w] { worker_loop(w); });
}

WaveRunner::~WaveRunner() {
  stop_.store(true, std::memory_order_release);
  add(generation_, 1);
  for (std::thread& t : threads_) t.join();
}

void WaveRunner::wait_for(uint32_t self, const WaveWait& wait, WorkerTimes* t) {
  Counter& done = counters_[wait.worker];
  if (done.value.load(std::memory_order_acquire) >= wait.count) return;
  const Clock::time_point start = Clock::now();
  const uint64_t task_before = t->task_ns;
  // The list's entry count when it was first seen stalled (kNotParked: not stalled), and since.
  uint32_t stalled_at = kNotParked;
  Clock::time_point stalled_since;
  uint32_t polls = 0;
  auto ready = [&] {
    const uint32_t v = done.value.load(std::memory_order_acquire);
    if (v >= wait.count) return true;
    if (++polls % 8 != 0) return false;
    if (done.claimed.load(std::memory_order_acquire) != v) {
      stalled_at = kNotParked;
      return false;
    }
    const Clock::time_point now = Clock::now();
    if (stalled_at == kNotParked) {
      stalled_at = v;
      stalled_since = now;
    } else if (now - stalled_since >= kHelpAfter && try_help(wait.worker, t)) {
      // The owner has not come back: go on with its next entry without waiting again.
      stalled_at = done.value.load(std::memory_order_acquire);
    }
    return done.value.load(std::memory_order_acquire) >= wait.count;
  };
  if (!poll(ready, kWaitSpin, kWaitYield)) {
    Parked& p = parked_[self];
    p.count.store(wait.count, std::memory_order_relaxed);
    p.worker.store(wait.worker, std::memory_order_relaxed);
    done.sleepers.fetch_add(1, std::memory_order_seq_cst);
    for (uint32_t v = done.value.load(std::memory_order_seq_cst); v < wait.count;
         v = done.value.load(std::memory_order_acquire))
      futex_wait(done.value, v);
    done.sleepers.fetch_sub(1, std::memory_order_relaxed);
    p.worker.store(kNotParked, std::memory_order_relaxed);
  }
  // Entries run while helping count as task time, not as waiting.
  const uint64_t elapsed = ns_between(start, Clock::now());
  const uint64_t helped = t->task_ns - task_before;
  t->wait_ns += elapsed > helped ? elapsed - helped : 0;
}

bool WaveRunner::try_help(uint32_t owner, WorkerTimes* t) {
  Counter& c = counters_[owner];
  const WorkerList& list = schedule_->workers[owner];
  uint32_t i = c.claimed.load(std::memory_order_acquire);
  if (i >= list.entries.size() || c.value.load(std::memory_order_acquire) != i) return false;
  const WaveEntry& e = list.entries[i];
  if (e.kernel < schedule_->exclusive.size() && schedule_->exclusive[e.kernel]) return false;
  for (uint32_t j = e.wait_begin; j < e.wait_end; ++j) {
    const WaveWait& w = list.waits[j];
    if (counters_[w.worker].value.load(std::memory_order_acquire) < w.count) return false;
  }
  if (!c.claimed.compare_exchange_strong(i, i + 1, std::memory_order_acq_rel)) return false;
  run_entry(owner, i, t);
  return true;
}

void WaveRunner::run_entry(uint32_t owner, uint32_t index, WorkerTimes* t) {
  const WaveEntry& e = schedule_->workers[owner].entries[index];
  const Clock::time_point start = Clock::now();
  (*fn_)(e.kernel, e.chunk);
  t->task_ns += ns_between(start, Clock::now());
  // Everything the entry wrote is visible to a worker that acquires this count.
  publish_step(owner, index + 1);
}

WaveRunner::WorkerTimes WaveRunner::run_list(uint32_t worker) {
  const WorkerList& list = schedule_->workers[worker];
  const uint32_t n = static_cast<uint32_t>(list.entries.size());
  Counter& own = counters_[worker];
  WorkerTimes t;
  const Clock::time_point begin = Clock::now();
  t.wake_ns = ns_between(run_start_, begin);
  for (;;) {
    uint32_t i = own.claimed.load(std::memory_order_acquire);
    if (i == n) break;
    if (own.value.load(std::memory_order_acquire) < i) {
      wait_for(worker, {worker, i}, &t);  // a helper runs entry i - 1
      continue;
    }
    // Claimed only once its waits hold, so that a helper may take an entry whose owner was
    // descheduled while waiting.
    const WaveEntry& e = list.entries[i];
    for (uint32_t j = e.wait_begin; j < e.wait_end; ++j) wait_for(worker, list.waits[j], &t);
    if (!own.claimed.compare_exchange_strong(i, i + 1, std::memory_order_acq_rel)) continue;
    run_entry(worker, i, &t);
  }
  // Every list done (a helper may still run this one's last entry; another may lag).
  for (uint32_t u = 0; u < counters_.size(); ++u)
    wait_for(worker, {u, static_cast<uint32_t>(schedule_->workers[u].entries.size())}, &t);
  t.busy_ns = ns_between(begin, Clock::now());
  return t;
}

void WaveRunner::worker_loop(uint32_t worker) {
  uint32_t seen = 0;
  for (;;) {
    seen = await_change(generation_, seen, kIdleSpin, Clock::duration::zero());
    if (stop_.load(std::memory_order_acquire)) return;
    times_[worker] = run_list(worker);
    add(finished_, 1);
  }
}

bool WaveRunner::try_run(const EntryFn& fn) {
  std::unique_lock<std::mutex> lock(run_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  // Every worker finished the previous run before it returned, so nobody reads the counters.
  for (Counter& c : counters_) {
    c.value.store(0, std::memory_order_relaxed);
    c.claimed.store(0, std::memory_order_relaxed);
  }
  finished_.value.store(0, std::memory_order_relaxed);
  fn_ = &fn;
  run_start_ = Clock::now();
  add(generation_, 1);
  times_[0] = run_list(0);
  const uint32_t others = static_cast<uint32_t>(threads_.size());
  for (uint32_t f = finished_.value.load(std::memory_order_acquire); f < others;)
    f = await_change(finished_, f, kWaitSpin, kWaitYield);
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
