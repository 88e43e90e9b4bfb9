// Element types of the runtime: sizes and names, numbered as collage_dtype_t.
#include "program.h"

#include "collage/runtime_module.h"

namespace collage::rt {
namespace {

constexpr const char* kNames[kNumDTypes] = {"f32", "f16", "bf16", "i8",  "i32", "i64", "bool",
                                            "f64", "i16", "u8",   "u16", "u32", "u64", "str"};

}  // namespace

size_t dtype_size(int32_t dtype) {
  return collage_dtype_size(dtype);
}
const char* dtype_name(int32_t dtype) {
  return kNames[dtype];
}

std::string type_string(int32_t dtype, std::span<const int64_t> shape) {
  std::string s = dtype >= 0 && dtype < kNumDTypes ? kNames[dtype] : cat("dtype", dtype);
  s += '[';
  if (shape.empty()) s += "scalar";
  for (size_t i = 0; i < shape.size(); ++i)
    s += shape[i] < 0 ? cat(i ? "x" : "", "?") : cat(i ? "x" : "", shape[i]);
  return s + ']';
}

}  // namespace collage::rt
