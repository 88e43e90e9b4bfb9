// ThreadPool: workers wait on a generation counter (spinning briefly, then blocking), claim task
// indices with an atomic counter, and the caller waits until every task has finished (spinning
// briefly, then blocking).
#include "collage/thread_pool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COLLAGE_POOL_PAUSE() _mm_pause()
#else
#define COLLAGE_POOL_PAUSE() ((void)0)
#endif

namespace collage {
namespace {

// How long a worker polls for the next job, and the caller for its job's last tasks, before
// blocking: kernels of a model follow each other within microseconds, and a thread that blocked
// after each costs a futex wake-up per kernel (tens of microseconds on a VM, dozens of kernels
// per run). The runtime's TaskPool polls as long.
constexpr auto kSpin = std::chrono::microseconds(50);

// Polls `ready` for up to kSpin, pausing between polls (never yielding: sched_yield hands the
// core to any other runnable thread for the rest of its time slice, so that on a machine running
// anything else a worker missed the next kernel and the caller ran all its tasks); true once it
// holds.
template <typename Ready>
bool poll(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      COLLAGE_POOL_PAUSE();
    }
    if (std::chrono::steady_clock::now() >= until) return false;
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    ++generation_;
    published_generation_.store(generation_, std::memory_order_release);
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::on_pool_thread() const {
  const std::thread::id self = std::this_thread::get_id();
  if (caller_.load(std::memory_order_acquire) == self) return true;
  for (const std::thread& t : workers_) {
    if (t.get_id() == self) return true;
  }
  return false;
}

void ThreadPool::run_tasks() {
  const std::function<void(int64_t)>& fn = *fn_;
  for (;;) {
    int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= n_) return;
    fn(i);
    if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_all();
    }
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    // A short spin catches back-to-back jobs without a wake-up; then block.
    poll([&] { return published_generation_.load(std::memory_order_acquire) != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (stop_) return;
      if (fn_ == nullptr) continue;  // woke after that job was already finished
      busy_workers_.fetch_add(1, std::memory_order_acq_rel);
    }
    run_tasks();
    if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1 || on_pool_thread()) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mutex_);
  caller_.store(std::this_thread::get_id(), std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    next_.store(0, std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    ++generation_;
    published_generation_.store(generation_, std::memory_order_release);
  }
  work_cv_.notify_all();
  run_tasks();
  poll([&] {
    return finished_.load(std::memory_order_acquire) == n_ &&
           busy_workers_.load(std::memory_order_acquire) == 0;
  });
  {
    // Wait for every task and for every worker to leave run_tasks (so the job state can be reused).
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] {
      return finished_.load(std::memory_order_acquire) == n_ &&
             busy_workers_.load(std::memory_order_acquire) == 0;
    });
    fn_ = nullptr;
  }
  caller_.store(std::thread::id(), std::memory_order_release);
}

}  // namespace collage
