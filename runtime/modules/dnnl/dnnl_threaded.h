// ThreadedKernel: a dnnl kernel as the module hands it out, with variants for fewer OpenMP
// threads built on demand, so that the wave executor can run several kernels side by side.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collage/runtime_module.h"
#include "dnnl_kernel.h"

namespace collage::rt_dnnl {

class ThreadedKernel {
 public:
  // Creates the kernel for its own thread count (DnnlKernel) and keeps a copy of `desc` to build
  // variants from later; the constants stay borrowed (valid until the kernel is destroyed, as
  // the module ABI promises). Throws as DnnlKernel does.
  explicit ThreadedKernel(const collage_kernel_desc_t& desc);

  // Runs on the kernel's own thread count. Thread-safe.
  void run(void* const* args) { full_->run(args); }
  // Runs with at most `max_threads` OpenMP threads, the calling thread included (>= 1): the
  // kernel itself when it was built for no more, else the variant built for `max_threads`
  // (built now if it was not prepared). Thread-safe. Throws ParamError or dnnl::error.
  void run_threads(void* const* args, int32_t max_threads);
  // Builds the variant run_threads(…, max_threads) uses, if it needs one.
  void prepare_threads(int32_t max_threads) { (void)variant(max_threads); }

 private:
  DnnlKernel& variant(int32_t max_threads);

  // The creation descriptor, with everything it points to that is only borrowed for the call.
  std::string entry_;
  std::vector<uint8_t> params_;
  std::vector<std::vector<int64_t>> shapes_;  // arguments', then constants'
  std::vector<collage_tensor_desc_t> args_, constant_descs_;
  std::vector<const void*> constants_;
  collage_kernel_desc_t desc_{};

  std::unique_ptr<DnnlKernel> full_;
  std::mutex mu_;
  std::map<int32_t, std::unique_ptr<DnnlKernel>> variants_;  // by thread count
};

}  // namespace collage::rt_dnnl
