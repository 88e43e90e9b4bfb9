// WaveRunner: the workers' loop, step-counter waits that help unstarted lists, and the timing.
#include "wave_runner.h"

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

bool try_claim(std::atomic<uint32_t>& claim) {
  uint32_t expected = 0;
  return claim.load(std::memory_order_relaxed) == 0 &&
         claim.compare_exchange_strong(expected, 1, std::memory_order_acquire);
}

}  // namespace

WaveRunner::WaveRunner(const WaveSchedule* schedule)
    : schedule_(schedule), lists_(schedule->workers.size()) {
  finished_.store(static_cast<uint32_t>(lists_.size() - 1), std::memory_order_relaxed);
  for (uint32_t w = 1; w < schedule->workers.size(); ++w)
    threads_.emplace_back([this, w] { worker_loop(w); });
}

WaveRunner::~WaveRunner() {
  // A worker may still be checking in for the last run.
  const uint32_t others = static_cast<uint32_t>(threads_.size());
  for (uint32_t f = finished_.load(std::memory_order_acquire); f < others;)
    f = await_change(finished_, f);
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WaveRunner::advance(uint32_t w, uint32_t until, Times* t) {
  const WorkerList& list = schedule_->workers[w];
  ListState& s = lists_[w];
  while (s.next < until) {
    const WaveEntry& e = list.entries[s.next];
    for (uint32_t j = e.wait_begin; j < e.wait_end; ++j) wait_for(list.waits[j], t);
    const Clock::time_point start = Clock::now();
    (*fn_)(e.kernel, e.chunk);
    t->task_ns += ns_between(start, Clock::now());
    ++s.next;
    // Release: everything the entry wrote is visible to a thread that acquires this count.
    s.done.store(s.next, std::memory_order_release);
    s.done.notify_all();
  }
}

void WaveRunner::wait_for(const WaveWait& wait, Times* t) {
  ListState& s = lists_[wait.worker];
  uint32_t v = s.done.load(std::memory_order_acquire);
  if (v >= wait.count) return;
  const Clock::time_point start = Clock::now();
  const uint64_t task_before = t->task_ns, wait_before = t->wait_ns;
  while (v < wait.count) {
    // Its worker is not up yet: run the list here as far as this wait needs (its entries up to
    // there wait only on entries that happen before the one waiting now).
    if (s.awake.load(std::memory_order_acquire) == 0 && try_claim(s.claim)) {
      const uint32_t before = s.next;
      advance(wait.worker, wait.count, t);
      t->helped += s.next - before;
      s.claim.store(0, std::memory_order_release);
      s.claim.notify_all();
      break;
    }
    v = await_change(s.done, v);
  }
  // Entries run while helping (and their own waits) are counted where they happened.
  const uint64_t inner = (t->task_ns - task_before) + (t->wait_ns - wait_before);
  const uint64_t elapsed = ns_between(start, Clock::now());
  t->wait_ns += elapsed > inner ? elapsed - inner : 0;
}

void WaveRunner::run_own_list(uint32_t worker, Times* t) {
  ListState& s = lists_[worker];
  s.awake.store(1, std::memory_order_release);
  // A helper may hold the list while it runs the prefix it needs; it takes no more after this.
  while (!try_claim(s.claim)) {
    const Clock::time_point start = Clock::now();
    await_change(s.claim, 1);
    t->wait_ns += ns_between(start, Clock::now());
  }
  advance(worker, static_cast<uint32_t>(schedule_->workers[worker].entries.size()), t);
  s.claim.store(0, std::memory_order_release);
  s.claim.notify_all();
}

void WaveRunner::add_times(const Times& t, uint64_t wake_ns) {
  const uint64_t accounted = t.task_ns + t.wait_ns;
  task_ns_.fetch_add(t.task_ns, std::memory_order_relaxed);
  wait_ns_.fetch_add(t.wait_ns, std::memory_order_relaxed);
  overhead_ns_.fetch_add(t.busy_ns > accounted ? t.busy_ns - accounted : 0,
                         std::memory_order_relaxed);
  wake_ns_.fetch_add(wake_ns, std::memory_order_relaxed);
  helped_.fetch_add(t.helped, std::memory_order_relaxed);
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
    const Clock::time_point begin = Clock::now();
    Times t;
    run_own_list(worker, &t);
    t.busy_ns = ns_between(begin, Clock::now());
    add_times(t, ns_between(run_start_, begin));
    finished_.fetch_add(1, std::memory_order_acq_rel);
    finished_.notify_all();
  }
}

bool WaveRunner::try_run(const EntryFn& fn) {
  std::unique_lock<std::mutex> lock(run_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  // The previous run's workers have all checked in: nobody touches the lists any more.
  const uint32_t others = static_cast<uint32_t>(threads_.size());
  for (uint32_t f = finished_.load(std::memory_order_acquire); f < others;)
    f = await_change(finished_, f);
  for (ListState& s : lists_) {
    s.done.store(0, std::memory_order_relaxed);
    s.claim.store(0, std::memory_order_relaxed);
    s.awake.store(0, std::memory_order_relaxed);
    s.next = 0;
  }
  finished_.store(0, std::memory_order_relaxed);
  fn_ = &fn;
  run_start_ = Clock::now();
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  Times t;
  run_own_list(0, &t);
  // Every other list finished (helping those whose worker has not started).
  for (uint32_t w = 1; w < lists_.size(); ++w)
    wait_for({w, static_cast<uint32_t>(schedule_->workers[w].entries.size())}, &t);
  const Clock::time_point end = Clock::now();
  t.busy_ns = ns_between(run_start_, end);
  add_times(t, 0);
  runs_.fetch_add(1, std::memory_order_relaxed);
  wall_ns_.fetch_add(t.busy_ns, std::memory_order_relaxed);
  return true;
}

WaveRunStats WaveRunner::stats() const {
  const uint64_t n = lists_.size();
  WaveRunStats s;
  s.runs = runs_.load(std::memory_order_relaxed);
  s.wall_ns = wall_ns_.load(std::memory_order_relaxed);
  s.task_ns = task_ns_.load(std::memory_order_relaxed) / n;
  s.wait_ns = wait_ns_.load(std::memory_order_relaxed) / n;
  s.overhead_ns = overhead_ns_.load(std::memory_order_relaxed) / n;
  s.wake_ns = wake_ns_.load(std::memory_order_relaxed) / n;
  s.helped = helped_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace collage::waves
