// KernelShelf: a compile's built kernels by backend and key, the oldest let go past the bound.
#include "collage/kernel_shelf.h"

#include <algorithm>

namespace collage {

std::shared_ptr<Kernel> KernelShelf::take(std::string_view backend, uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kept_.find({std::string(backend), key});
  if (it == kept_.end()) return nullptr;
  ++reused_;
  return it->second.kernel;
}

void KernelShelf::keep(std::string_view backend, uint64_t key, std::shared_ptr<Kernel> kernel,
                       size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  ++built_;
  const Key k{std::string(backend), key};
  if (auto it = kept_.find(k); it != kept_.end()) {
    // Built again (two builds raced): the newer one is kept, as the newest.
    bytes_ -= it->second.bytes;
    it->second = {std::move(kernel), bytes};
    order_.erase(std::find(order_.begin(), order_.end(), k));
  } else {
    kept_.emplace(k, Entry{std::move(kernel), bytes});
  }
  order_.push_back(k);
  bytes_ += bytes;
  // Never the newest: a kernel larger than the bound is kept alone (GPT-2 as one OpenVINO region,
  // 1.2 GiB by its count, was compiled by its evaluation and again by the artifact build, 4.4 s).
  while (bytes_ > max_bytes_ && order_.size() > 1) {
    auto oldest = kept_.find(order_.front());
    bytes_ -= oldest->second.bytes;
    ++let_go_[oldest->first.first];
    kept_.erase(oldest);
    order_.pop_front();
  }
}

size_t KernelShelf::built() const {
  std::lock_guard<std::mutex> lock(mu_);
  return built_;
}

size_t KernelShelf::reused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reused_;
}

size_t KernelShelf::let_go(std::string_view backend) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = let_go_.find(backend);
  return it == let_go_.end() ? 0 : it->second;
}

}  // namespace collage
