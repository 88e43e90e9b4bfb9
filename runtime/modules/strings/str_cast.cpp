// CastString in the strings module: numbers or bool to text and text to them, with the meaning
// of the reference kernel (lib/ops/text_cast.cpp; both on runtime/algorithms/number_text.h).
// f16 and bf16 stay with the reference (the strings backend does not take them).
#include <cstring>

#include "number_text.h"
#include "str_kernel.h"

namespace collage::rt_strings {
namespace {

std::string text_at(const void* p, int32_t t, int64_t i) {
  switch (t) {
    case COLLAGE_DTYPE_F32: return algorithms::float_to_text(static_cast<const float*>(p)[i]);
    case COLLAGE_DTYPE_F64: return algorithms::float_to_text(static_cast<const double*>(p)[i]);
    case COLLAGE_DTYPE_I8: return std::to_string(static_cast<const int8_t*>(p)[i]);
    case COLLAGE_DTYPE_I16: return std::to_string(static_cast<const int16_t*>(p)[i]);
    case COLLAGE_DTYPE_I32: return std::to_string(static_cast<const int32_t*>(p)[i]);
    case COLLAGE_DTYPE_I64: return std::to_string(static_cast<const int64_t*>(p)[i]);
    case COLLAGE_DTYPE_BOOL:
    case COLLAGE_DTYPE_U8: return std::to_string(static_cast<const uint8_t*>(p)[i]);
    case COLLAGE_DTYPE_U16: return std::to_string(static_cast<const uint16_t*>(p)[i]);
    case COLLAGE_DTYPE_U32: return std::to_string(static_cast<const uint32_t*>(p)[i]);
    default: return std::to_string(static_cast<const uint64_t*>(p)[i]);
  }
}

template <typename T>
void put(void* y, int64_t i, T v) {
  static_cast<T*>(y)[i] = v;
}

// Element i of y (dtype t) from `text`; false when no number begins it.
bool read_text(std::string_view text, int32_t t, void* y, int64_t i) {
  if (t == COLLAGE_DTYPE_F32 || t == COLLAGE_DTYPE_F64) {
    double v = 0;
    if (!algorithms::text_to_double(text, &v)) return false;
    if (t == COLLAGE_DTYPE_F64)
      put<double>(y, i, v);
    else
      put<float>(y, i, static_cast<float>(v));
    return true;
  }
  if (t == COLLAGE_DTYPE_BOOL || t == COLLAGE_DTYPE_U8 || t == COLLAGE_DTYPE_U16 ||
      t == COLLAGE_DTYPE_U32 || t == COLLAGE_DTYPE_U64) {
    uint64_t v = 0;
    if (!algorithms::text_to_uint64(text, &v)) return false;
    switch (t) {
      case COLLAGE_DTYPE_BOOL: put<uint8_t>(y, i, v != 0); break;
      case COLLAGE_DTYPE_U8: put<uint8_t>(y, i, static_cast<uint8_t>(v)); break;
      case COLLAGE_DTYPE_U16: put<uint16_t>(y, i, static_cast<uint16_t>(v)); break;
      case COLLAGE_DTYPE_U32: put<uint32_t>(y, i, static_cast<uint32_t>(v)); break;
      default: put<uint64_t>(y, i, v); break;
    }
    return true;
  }
  int64_t v = 0;
  if (!algorithms::text_to_int64(text, &v)) return false;
  switch (t) {
    case COLLAGE_DTYPE_I8: put<int8_t>(y, i, static_cast<int8_t>(v)); break;
    case COLLAGE_DTYPE_I16: put<int16_t>(y, i, static_cast<int16_t>(v)); break;
    case COLLAGE_DTYPE_I32: put<int32_t>(y, i, static_cast<int32_t>(v)); break;
    default: put<int64_t>(y, i, v); break;
  }
  return true;
}

}  // namespace

std::string StrKernel::run_cast(const collage_rt_tensor_t& x, const StrOutputs& out) const {
  const std::vector<int64_t> shape(x.shape, x.shape + args_[0].shape.size());
  const int64_t n = numel(shape.data(), shape.size());
  const int32_t from = args_[0].dtype, to = args_[1].dtype;
  std::string error;
  void* y = output(out, 0, shape, &error);
  if (!y) return error;
  if (to == COLLAGE_DTYPE_STRING) {
    std::vector<std::string> texts(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) texts[i] = text_at(x.data, from, i);
    return write_strings(std::vector<std::string_view>(texts.begin(), texts.end()),
                         static_cast<collage_string_t*>(y), out);
  }
  const auto* in = static_cast<const collage_string_t*>(x.data);
  for (int64_t i = 0; i < n; ++i) {
    const std::string_view text(in[i].data, in[i].size);
    if (!read_text(text, to, y, i))
      return "element " + std::to_string(i) + " '" + std::string(text) +
             "' is not a number of dtype " + std::to_string(to) + " (or is out of range)";
  }
  return "";
}

}  // namespace collage::rt_strings
