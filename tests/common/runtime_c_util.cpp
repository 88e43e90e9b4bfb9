// Helpers of the tests that call the runtime's C API.
#include "common/runtime_c_util.h"

namespace collage::testing {

std::string take_message(collage_status_t* status) {
  if (!status) return "";
  std::string m = collage_status_message(status);
  collage_status_free(status);
  return m.empty() ? "(no message)" : m;
}

DLTensor dl_view(const Tensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw());
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int32_t>(t.rank());
  d.dtype = collage_dtype_to_dlpack(static_cast<int32_t>(t.dtype()));
  d.shape = const_cast<int64_t*>(t.shape().data());
  return d;
}

}  // namespace collage::testing
