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

std::vector<Tensor> run_module(const collage_module_t* m, const std::vector<Tensor>& inputs,
                               int32_t* code, std::string* message) {
  std::vector<Tensor> outputs;
  for (int32_t i = 0; i < collage_module_num_outputs(m); ++i) {
    collage_tensor_info_t info{};
    info.struct_size = sizeof info;
    if (collage_status_t* s = collage_module_output_info(m, i, &info)) {
      if (code) *code = collage_status_code(s);
      if (message) *message = collage_status_message(s);
      collage_status_free(s);
      return {};
    }
    outputs.emplace_back(static_cast<DType>(info.dtype), Shape(info.shape, info.shape + info.ndim));
  }
  std::vector<DLTensor> in, out;
  for (const Tensor& t : inputs) in.push_back(dl_view(t));
  for (const Tensor& t : outputs) out.push_back(dl_view(t));
  collage_status_t* s = collage_module_run(m, in.data(), static_cast<int32_t>(in.size()),
                                           out.data(), static_cast<int32_t>(out.size()));
  if (code) *code = collage_status_code(s);
  if (message) *message = collage_status_message(s);
  const bool ok = s == nullptr;
  collage_status_free(s);
  return ok ? outputs : std::vector<Tensor>{};
}

}  // namespace collage::testing
