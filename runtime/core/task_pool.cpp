// TaskPool: jobs on a queue, tasks claimed one at a time under the pool's lock.
#include "task_pool.h"

#include <algorithm>

namespace collage::rt {

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
  if (job->next == job->n) queue_.erase(std::find(queue_.begin(), queue_.end(), job));
  return i;
}

void TaskPool::worker_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job* job = queue_.front();
    const int32_t i = claim(job);
    lock.unlock();
    (*job->fn)(i);
    lock.lock();
    // The caller frees the job once `done` reaches n; nothing touches it after this.
    if (++job->done == job->n) done_cv_.notify_all();
  }
}

void TaskPool::parallel_for(int32_t n, const std::function<void(int32_t)>& fn) {
  if (n <= 0) return;
  if (n == 1 || workers_.empty()) {
    for (int32_t i = 0; i < n; ++i) fn(i);
    return;
  }
  Job job{&fn, n};
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&job);
  if (n - 1 >= static_cast<int32_t>(workers_.size())) {
    work_cv_.notify_all();
  } else {
    for (int32_t i = 1; i < n; ++i) work_cv_.notify_one();
  }
  while (job.next < job.n) {
    const int32_t i = claim(&job);
    lock.unlock();
    fn(i);
    lock.lock();
    ++job.done;
  }
  done_cv_.wait(lock, [&] { return job.done == job.n; });
}

}  // namespace collage::rt
