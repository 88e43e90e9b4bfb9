// TaskPool: jobs on a queue, tasks claimed one at a time under the pool's lock. Nothing blocks
// at once: idle workers and waiting callers poll for kSpin first, and the lock, held for a few
// hundred nanoseconds at a time, is tried for as long before a thread sleeps on it.
#include "task_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COLLAGE_POOL_PAUSE() _mm_pause()
#else
#define COLLAGE_POOL_PAUSE() ((void)0)
#endif

namespace collage::rt {
namespace {

// Polls `ready` for up to TaskPool::kSpin, pausing between polls; true once it holds. The poll
// keeps its core: a poll that yielded (sched_yield) handed the core to any other runnable thread
// for the rest of its time slice, milliseconds, so that on a machine running anything else the
// worker missed the next kernel's tasks and the caller ran them all (MobileNetV2's artifact ran
// as fast on one core as on two).
template <typename Ready>
bool poll(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + TaskPool::kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      COLLAGE_POOL_PAUSE();
    }
    if (std::chrono::steady_clock::now() >= until) return false;
  }
}

// Takes the mutex of `lock`: a thread that blocks on it (glibc's mutex sleeps at the first
// conflict) has to be woken again, which costs more than the other thread's critical section.
void acquire(std::unique_lock<std::mutex>& lock) {
  if (!poll([&] { return lock.try_lock(); })) lock.lock();
}

}  // namespace

TaskPool::TaskPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int32_t TaskPool::claim(Job* job) {
  const int32_t i = job->next++;
  if (job->next == job->n) {
    queue_.erase(std::find(queue_.begin(), queue_.end(), job));
    queued_.store(queue_.size(), std::memory_order_relaxed);
  }
  return i;
}

void TaskPool::worker_loop() {
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  acquire(lock);
  for (;;) {
    if (queue_.empty() && !stop_) {
      lock.unlock();
      poll([this] { return queued_.load(std::memory_order_relaxed) != 0; });
      acquire(lock);
    }
    work_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job* job = queue_.front();
    const int32_t i = claim(job);
    lock.unlock();
    (*job->fn)(i);
    acquire(lock);
    // The caller frees the job once `done` reaches n, which it may see without the lock:
    // nothing touches the job after the increment.
    const int32_t n = job->n;
    if (job->done.fetch_add(1, std::memory_order_acq_rel) + 1 == n) done_cv_.notify_all();
  }
}

void TaskPool::parallel_for(int32_t n, const std::function<void(int32_t)>& fn) {
  if (n <= 0) return;
  if (n == 1 || workers_.empty()) {
    for (int32_t i = 0; i < n; ++i) fn(i);
    return;
  }
  Job job{&fn, n};
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  acquire(lock);
  queue_.push_back(&job);
  queued_.store(queue_.size(), std::memory_order_relaxed);
  int32_t i = claim(&job);  // the caller's first task
  lock.unlock();
  // Woken after the unlock, so that a sleeping worker does not wake into a held lock. Workers
  // still polling see the job without it.
  if (n - 1 >= static_cast<int32_t>(workers_.size())) {
    work_cv_.notify_all();
  } else {
    for (int32_t w = 1; w < n; ++w) work_cv_.notify_one();
  }
  for (;;) {
    fn(i);
    acquire(lock);
    job.done.fetch_add(1, std::memory_order_acq_rel);
    if (job.next == job.n) break;
    i = claim(&job);
    lock.unlock();
  }
  auto finished = [&] { return job.done.load(std::memory_order_acquire) == job.n; };
  if (finished()) return;
  lock.unlock();
  if (poll(finished)) return;
  lock.lock();
  done_cv_.wait(lock, finished);
}

}  // namespace collage::rt
