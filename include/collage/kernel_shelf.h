// KernelShelf: the kernels one compile has built, kept so that its measurement, its end-to-end
// evaluations and its artifact build compile each group once, for backends whose builds no cache
// on disk keeps (openvino: a compiled region lives in memory only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "collage/kernel.h"

namespace collage {

// Kernels by (backend name, the backend's key of everything a kernel depends on: its group's
// signature, its constants' contents, its threads, ...), bounded in bytes: past `max_bytes` the
// oldest are let go, never the newest (a kernel larger than the bound is kept alone; a kernel in
// use lives on; a later build of one let go compiles again). Thread-safe.
// The counters say how many kernels were built and kept, and how many builds took one instead.
class KernelShelf {
 public:
  static constexpr size_t kDefaultMaxBytes = size_t{1} << 30;
  explicit KernelShelf(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}

  // The kernel kept under (`backend`, `key`), counted as reused; null when there is none.
  std::shared_ptr<Kernel> take(std::string_view backend, uint64_t key);
  // Keeps `kernel`, just built, under (`backend`, `key`), counted as built; it holds about
  // `bytes` of memory (its constants, copied and packed).
  void keep(std::string_view backend, uint64_t key, std::shared_ptr<Kernel> kernel, size_t bytes);

  size_t built() const;
  size_t reused() const;
  // How many kernels of `backend` were let go past the bound: when not 0, a kernel of it that was
  // kept may be gone, and its next build compiles it again.
  size_t let_go(std::string_view backend) const;

 private:
  using Key = std::pair<std::string, uint64_t>;
  struct Entry {
    std::shared_ptr<Kernel> kernel;
    size_t bytes = 0;
  };
  mutable std::mutex mu_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::map<Key, Entry> kept_;
  std::deque<Key> order_;  // kept_'s keys, oldest first
  std::map<std::string, size_t, std::less<>> let_go_;  // by backend
  size_t built_ = 0, reused_ = 0;
};

// A kernel of the shelf, handed to one user: it runs and describes the shared kernel.
class ShelvedKernel : public Kernel {
 public:
  explicit ShelvedKernel(std::shared_ptr<Kernel> kernel) : kernel_(std::move(kernel)) {}
  int32_t task_count() const override { return kernel_->task_count(); }
  absl::Status run_task(void* const* args, int32_t task_id) override {
    return kernel_->run_task(args, task_id);
  }
  bool has_thread_team() const override { return kernel_->has_thread_team(); }
  absl::Status run_task_threads(void* const* args, int32_t task_id,
                                int32_t max_threads) override {
    return kernel_->run_task_threads(args, task_id, max_threads);
  }
  const KernelRecord& record() const override { return kernel_->record(); }
  bool dynamic_shapes() const override { return kernel_->dynamic_shapes(); }
  absl::StatusOr<std::vector<Tensor>> run_dynamic(const std::vector<Tensor>& inputs) override {
    return kernel_->run_dynamic(inputs);
  }

 private:
  std::shared_ptr<Kernel> kernel_;
};

}  // namespace collage
