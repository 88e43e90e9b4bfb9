// Shared helpers of the dynamic module's operators (dyn_value.h).
#include "dyn_value.h"

namespace collage::rt_dynamic {

size_t element_size(int32_t dtype) {
  const size_t bytes = collage_dtype_size(dtype);
  if (bytes == 0) throw KernelError("element type " + std::to_string(dtype) + " is not supported");
  return bytes;
}

std::string type_text(int32_t dtype, const std::vector<int64_t>& shape) {
  static const char* const kNames[] = {"f32", "f16", "bf16", "i8", "i32", "i64", "bool"};
  std::string s = dtype >= 0 && dtype < 7 ? kNames[dtype] : "dtype" + std::to_string(dtype);
  s += '[';
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + (shape.empty() ? "scalar]" : "]");
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

int64_t axis_in(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    throw KernelError(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                      std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

int64_t int_at(const Value& v, int64_t i) {
  if (v.dtype == COLLAGE_DTYPE_I64) return v.as<int64_t>()[i];
  if (v.dtype == COLLAGE_DTYPE_I32) return v.as<int32_t>()[i];
  throw KernelError("indices must be i32 or i64, got " + type_text(v.dtype, v.shape));
}

uint8_t* Outputs::make(size_t i, const std::vector<int64_t>& shape) {
  if (shape.size() != ranks_[i])
    throw KernelError("output " + std::to_string(i) + " came out as " +
                      type_text(dtypes_[i], shape) + ", of rank " + std::to_string(shape.size()) +
                      ", where the plan has rank " + std::to_string(ranks_[i]));
  void* p = alloc_(ctx_, static_cast<int32_t>(i), shape.data());
  if (!p)
    throw KernelError("the runtime gave no buffer for output " + std::to_string(i) + " (" +
                      type_text(dtypes_[i], shape) + ")");
  return static_cast<uint8_t*>(p);
}

}  // namespace collage::rt_dynamic
