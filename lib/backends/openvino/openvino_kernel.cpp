// OpenvinoKernel: runs through the module's Region; the record is made once, lazily, and
// cached. CachedRegionKernel: a cached record, its region compiled once, lazily.
#include "backends/openvino/openvino_kernel.h"

#include "backends/openvino/region_cache.h"

#include "core/str_cat.h"

namespace collage::openvino_backend {
namespace {

// `bytes` as a 1-D i8 constant that owns them.
Tensor byte_tensor(std::string bytes) {
  auto owner = std::make_shared<std::string>(std::move(bytes));
  return Tensor::wrap(DType::i8, {static_cast<int64_t>(owner->size())}, owner->data(), owner);
}

template <typename F>
absl::Status guarded(const char* what, F&& fn) {
  try {
    fn();
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::InternalError(str_cat("openvino kernel 'region'", what, ": ",
                                       rt_openvino::exception_text(e)));
  }
}

}  // namespace

absl::Status OpenvinoKernel::run_task(void* const* args, int32_t task_id) {
  if (task_id != 0) return absl::InvalidArgumentError("openvino regions run as one task");
  return guarded("", [&] { region_->run(args); });
}

absl::Status OpenvinoKernel::run_task_threads(void* const* args, int32_t task_id,
                                              int32_t max_threads) {
  if (task_id != 0) return absl::InvalidArgumentError("openvino regions run as one task");
  return guarded(" on fewer threads", [&] { region_->run_threads(args, max_threads); });
}

const KernelRecord& OpenvinoKernel::record() const {
  std::call_once(recorded_, [&] {
    record_.module = "openvino";
    record_.entry = rt_openvino::kRegionEntry;
    for (bool with_blob : {true, false}) {
      try {
        rt_openvino::RegionBytes b = rt_openvino::region_bytes(*model_, *region_, with_blob);
        record_.params = std::move(b.params);
        record_.constants = {byte_tensor(std::move(b.model_xml)), byte_tensor(std::move(b.weights))};
        if (with_blob) record_.constants.push_back(byte_tensor(std::move(b.blob)));
        if (!cache_.dir.empty()) (void)write_cached_region(cache_.dir, cache_.key, record_);
        return;
      } catch (const std::exception&) {
        // Without the blob next; a record without constants fails to load, saying so.
      }
    }
  });
  return record_;
}

absl::StatusOr<Kernel*> CachedRegionKernel::compiled() {
  std::call_once(compiled_once_, [&] {
    auto k = compile_();
    if (k.ok())
      kernel_ = *std::move(k);
    else
      status_ = k.status();
  });
  if (!kernel_) return status_;
  return kernel_.get();
}

absl::Status CachedRegionKernel::run_task(void* const* args, int32_t task_id) {
  auto k = compiled();
  if (!k.ok()) return k.status();
  return (*k)->run_task(args, task_id);
}

absl::Status CachedRegionKernel::run_task_threads(void* const* args, int32_t task_id,
                                                  int32_t max_threads) {
  auto k = compiled();
  if (!k.ok()) return k.status();
  return (*k)->run_task_threads(args, task_id, max_threads);
}

}  // namespace collage::openvino_backend
