// Checking a caller's DLTensor against the plan's tensor it stands for.
#include "tensor_check.h"

namespace collage::rt {
namespace {

constexpr uint8_t kDLBoolCode = 6;  // kDLBool in DLPack >= 0.8

// The DLPack type of each collage dtype, in collage_dtype_t order.
constexpr DLDataType kDLTypes[kNumDTypes] = {
    {kDLFloat, 32, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLInt, 8, 1},
    {kDLInt, 32, 1},   {kDLInt, 64, 1},   {kDLUInt, 8, 1},    {kDLFloat, 64, 1},
    {kDLInt, 16, 1},   {kDLUInt, 8, 1},   {kDLUInt, 16, 1},   {kDLUInt, 32, 1},
    {kDLUInt, 64, 1},  {kDLOpaqueHandle, 128, 1}};

bool dtype_matches(int32_t dtype, DLDataType t) {
  const DLDataType want = kDLTypes[dtype];
  if (t.code == want.code && t.bits == want.bits && t.lanes == want.lanes) return true;
  // bool: kDLUInt/8 (DLPack 0.6) or kDLBool/8 (newer)
  return dtype == 6 && t.code == kDLBoolCode && t.bits == 8 && t.lanes == 1;
}

std::string dl_type_string(const DLTensor& t) {
  std::string s;
  for (int32_t d = 0; d < kNumDTypes && s.empty(); ++d)
    if (dtype_matches(d, t.dtype)) s = dtype_name(d);
  if (s.empty())
    s = cat("dlpack(code ", static_cast<int>(t.dtype.code), ", bits ",
            static_cast<int>(t.dtype.bits), ", lanes ", static_cast<int>(t.dtype.lanes), ")");
  s += '[';
  if (t.ndim == 0) s += "scalar";
  for (int32_t i = 0; i < t.ndim && t.shape; ++i) s += cat(i ? "x" : "", t.shape[i]);
  return s + ']';
}

}  // namespace

DLDataType dlpack_dtype(int32_t dtype) {
  return kDLTypes[dtype];
}

Status check_tensor(const char* role, size_t i, const TensorInfo& info, const DLTensor& t,
                    void** data) {
  const std::string what = cat(role, " ", i, " '", info.name, "'");
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
    return error(Code::invalid_argument, what, ": device type ",
                 static_cast<int>(t.device.device_type), ", only CPU memory is supported");
  bool same = dtype_matches(info.dtype, t.dtype) &&
              t.ndim == static_cast<int32_t>(info.shape.size()) && (t.ndim == 0 || t.shape);
  for (int32_t d = 0; same && d < t.ndim; ++d) same = t.shape[d] == info.shape[d];
  if (!same)
    return error(
        Code::invalid_argument, what, ": expected ", type_string(info.dtype, info.shape), ", got ",
        t.ndim < 0 || (t.ndim > 0 && !t.shape) ? "a tensor without a shape" : dl_type_string(t));
  if (t.strides) {
    int64_t expected = 1;
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      if (t.shape[d] != 1 && t.strides[d] != expected)
        return error(Code::invalid_argument, what,
                     ": not dense row-major (strides must be null or compact)");
      expected *= t.shape[d];
    }
  }
  if (!t.data && info.bytes != 0) return error(Code::invalid_argument, what, ": no data pointer");
  *data = static_cast<uint8_t*>(t.data) + t.byte_offset;
  if (info.dtype == kStringDType) {
    const auto* s = static_cast<const collage_string_t*>(*data);
    for (uint64_t e = 0; e < info.bytes / sizeof(collage_string_t); ++e)
      if (!s[e].data && s[e].size)
        return error(Code::invalid_argument, what, ": string ", e, " has ", s[e].size,
                     " bytes at a NULL pointer");
  }
  return Status();
}

}  // namespace collage::rt
