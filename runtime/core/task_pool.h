// A small pool of worker threads that spreads the tasks of one kernel over the cores. Several
// runs (threads) may use one pool at once: their jobs queue up and every caller works on its
// own job too, so a call always makes progress.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace collage::rt {

class TaskPool {
 public:
  // `num_threads` threads in total: the calling thread and num_threads - 1 workers (values below
  // 1 count as 1, i.e. no workers).
  explicit TaskPool(int num_threads);
  // Joins the workers; no parallel_for may be running.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // How long an idle worker, and a caller waiting for its job's last tasks, poll before they
  // block. A model's kernels follow each other within microseconds; a worker that blocked after
  // every task had to be woken for every kernel (a futex wake-up, tens of microseconds on a VM,
  // dozens of kernels per run). The in-process executor's pool (collage::ThreadPool) polls the
  // same way, so an artifact runs as fast as its placement does in process.
  static constexpr std::chrono::microseconds kSpin{50};

  // Runs fn(i) for every i in [0, n) and returns when all have finished; the caller runs tasks
  // too. fn must not throw. Safe to call from several threads at once.
  void parallel_for(int32_t n, const std::function<void(int32_t)>& fn);

 private:
  struct Job {
    const std::function<void(int32_t)>* fn;
    int32_t n;
    int32_t next = 0;               // next unclaimed task; guarded by mu_
    std::atomic<int32_t> done = 0;  // finished tasks; written under mu_, polled without it
  };
  // Claims the next task of `job` (mu_ held); dequeues the job once all its tasks are claimed.
  int32_t claim(Job* job);
  void worker_loop();

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Job*> queue_;         // jobs with unclaimed tasks
  std::atomic<size_t> queued_{0};  // queue_.size(), for the idle workers' polling
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace collage::rt
