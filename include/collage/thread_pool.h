// ThreadPool: a fixed set of worker threads that run the tasks of a parallel_for; owned by whoever
// creates it (there is no global pool).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace collage {

class ThreadPool {
 public:
  // A pool that runs tasks on `num_threads` threads in total: the thread calling parallel_for and
  // num_threads - 1 workers started here (values below 1 count as 1).
  explicit ThreadPool(int num_threads);
  // Stops and joins the workers. No parallel_for may be running.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(i) for every i in [0, n), spread over the pool's threads (the caller takes part), and
  // returns when all have finished. fn must not throw. Calls from several threads at once run one
  // after another; a call from inside a task (nested) runs its tasks serially on that thread.
  void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

 private:
  void worker_loop();
  // Claims and runs tasks of the current job until none is left.
  void run_tasks();
  bool on_pool_thread() const;

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // serialises parallel_for calls from different threads

  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  uint64_t generation_ = 0;  // bumped for every job (guarded by mutex_)
  std::atomic<uint64_t> published_generation_{0};
  bool stop_ = false;

  const std::function<void(int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> finished_{0};
  std::atomic<int> busy_workers_{0};
  std::atomic<std::thread::id> caller_{};
};

}  // namespace collage
