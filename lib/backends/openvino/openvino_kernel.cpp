// OpenvinoKernel: runs through the module's Region; the record is made once, lazily.
#include "backends/openvino/openvino_kernel.h"

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
        return;
      } catch (const std::exception&) {
        // Without the blob next; a record without constants fails to load, saying so.
      }
    }
  });
  return record_;
}

}  // namespace collage::openvino_backend
