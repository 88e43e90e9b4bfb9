// Helpers of the tests that call the runtime's C API.
#include "common/runtime_c_util.h"

#include <cstring>

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

std::vector<Tensor> run_module_outputs(const collage_module_t* m,
                                       const std::vector<Tensor>& inputs, std::string* message) {
  std::vector<std::vector<collage_string_t>> strings(inputs.size());
  std::vector<DLTensor> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    in.push_back(dl_view(t));
    if (t.dtype() != DType::str) continue;
    for (int64_t e = 0; e < t.numel(); ++e)
      strings[i].push_back({t.data<std::string>()[e].data(), t.data<std::string>()[e].size()});
    in.back().data = strings[i].data();
  }
  collage_outputs_t* outs = nullptr;
  *message = take_message(
      collage_module_run_outputs(m, in.data(), static_cast<int32_t>(in.size()), &outs));
  std::vector<Tensor> result;
  for (int32_t i = 0; message->empty() && i < collage_outputs_count(outs); ++i) {
    DLTensor t{};
    collage_tensor_info_t info{};
    info.struct_size = sizeof info;
    *message = take_message(collage_outputs_get(outs, i, &t));
    if (message->empty()) *message = take_message(collage_module_output_info(m, i, &info));
    if (!message->empty()) break;
    Tensor copy(static_cast<DType>(info.dtype), Shape(t.shape, t.shape + t.ndim));
    if (copy.dtype() == DType::str) {
      const auto* s = static_cast<const collage_string_t*>(t.data);
      for (int64_t e = 0; e < copy.numel(); ++e)
        copy.data<std::string>()[e].assign(s[e].data ? s[e].data : "", s[e].size);
    } else if (copy.bytes()) {
      std::memcpy(copy.raw(), t.data, copy.bytes());
    }
    result.push_back(std::move(copy));
  }
  collage_outputs_release(outs);
  if (!message->empty()) result.clear();
  return result;
}

}  // namespace collage::testing
