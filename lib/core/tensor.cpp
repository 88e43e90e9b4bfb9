// Tensor storage, element access and conversions.
#include "collage/tensor.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace collage {

bool has_dynamic_dims(const Shape& shape) {
  for (int64_t d : shape)
    if (d == kDynamicDim) return true;
  return false;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d == kDynamicDim) return -1;
    n *= d;
  }
  return n;
}

std::optional<int64_t> checked_shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

std::vector<int64_t> shape_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

std::string shape_to_string(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += shape[i] == kDynamicDim ? std::string("?") : std::to_string(shape[i]);
  }
  return s;
}

std::string type_to_string(const TensorType& t) {
  return std::string(dtype_name(t.dtype)) + "[" + shape_to_string(t.shape) + "]";
}

bool type_fits(const TensorType& actual, const TensorType& declared) {
  if (actual.dtype != declared.dtype || actual.shape.size() != declared.shape.size()) return false;
  for (size_t d = 0; d < declared.shape.size(); ++d)
    if (declared.shape[d] != kDynamicDim && declared.shape[d] != actual.shape[d]) return false;
  return true;
}

Tensor::Tensor(DType dtype, Shape shape) {
  type_ = TensorType{dtype, std::move(shape)};
  if (dtype == DType::str) {
    // At least one element, so that an empty tensor still has a buffer (empty() is "none").
    const int64_t n = numel() > 0 ? numel() : 1;
    auto strings = std::make_shared<std::vector<std::string>>(static_cast<size_t>(n));
    data_ = strings->data();
    owner_ = std::move(strings);
    return;
  }
  size_t bytes = type_.bytes();
  size_t alloc = (bytes + 63) / 64 * 64;
  if (alloc == 0) alloc = 64;
  void* p = std::aligned_alloc(64, alloc);
  assert(p && "out of memory");
  std::memset(p, 0, alloc);
  owner_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  data_ = p;
}

Tensor Tensor::wrap(DType dtype, Shape shape, void* data, std::shared_ptr<void> keep_alive) {
  assert(dtype != DType::str && "string tensors own their elements");
  Tensor t;
  t.type_ = TensorType{dtype, std::move(shape)};
  t.owner_ = std::move(keep_alive);
  t.data_ = data;
  return t;
}

Tensor Tensor::from_f32(Shape shape, std::span<const float> values) {
  Tensor t(DType::f32, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == t.numel());
  std::memcpy(t.raw(), values.data(), t.bytes());
  return t;
}

Tensor Tensor::from_i64(Shape shape, std::span<const int64_t> values) {
  Tensor t(DType::i64, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == t.numel());
  std::memcpy(t.raw(), values.data(), t.bytes());
  return t;
}

Tensor Tensor::from_strings(Shape shape, std::span<const std::string> values) {
  Tensor t(DType::str, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == t.numel());
  std::copy(values.begin(), values.end(), t.data<std::string>());
  return t;
}

Tensor Tensor::scalar_f32(float v) { return from_f32({}, std::span<const float>(&v, 1)); }
Tensor Tensor::scalar_i64(int64_t v) { return from_i64({}, std::span<const int64_t>(&v, 1)); }

Tensor Tensor::clone() const {
  if (empty()) return Tensor();
  Tensor t(type_.dtype, type_.shape);
  if (dtype() == DType::str)
    std::copy_n(data<std::string>(), numel(), t.data<std::string>());
  else
    std::memcpy(t.raw(), data_, bytes());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  assert(shape_numel(shape) == numel());
  Tensor t = *this;
  t.type_.shape = std::move(shape);
  return t;
}

double Tensor::get_as_double(int64_t i) const {
  switch (dtype()) {
    case DType::f32: return data<float>()[i];
    case DType::f16: return half_to_float(data<uint16_t>()[i]);
    case DType::bf16: return bfloat16_to_float(data<uint16_t>()[i]);
    case DType::i8: return data<int8_t>()[i];
    case DType::i32: return data<int32_t>()[i];
    case DType::i64: return static_cast<double>(data<int64_t>()[i]);
    case DType::boolean: return data<uint8_t>()[i] ? 1.0 : 0.0;
    case DType::f64: return data<double>()[i];
    case DType::i16: return data<int16_t>()[i];
    case DType::u8: return data<uint8_t>()[i];
    case DType::u16: return data<uint16_t>()[i];
    case DType::u32: return data<uint32_t>()[i];
    case DType::u64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::str: break;  // strings have no numeric value
  }
  return 0;
}

int64_t Tensor::get_as_int64(int64_t i) const {
  switch (dtype()) {
    case DType::i8: return data<int8_t>()[i];
    case DType::i32: return data<int32_t>()[i];
    case DType::i64: return data<int64_t>()[i];
    case DType::boolean: return data<uint8_t>()[i] ? 1 : 0;
    case DType::i16: return data<int16_t>()[i];
    case DType::u8: return data<uint8_t>()[i];
    case DType::u16: return data<uint16_t>()[i];
    case DType::u32: return data<uint32_t>()[i];
    case DType::u64: return static_cast<int64_t>(data<uint64_t>()[i]);  // wraps above 2^63
    default: {
      // Saturating: converting a float outside the int64 range is undefined behaviour (a
      // fuzzer finding, Resize sizes given as FLOAT); NaN gives 0.
      const double d = get_as_double(i);
      if (std::isnan(d)) return 0;
      if (d >= 0x1p63) return std::numeric_limits<int64_t>::max();
      if (d < -0x1p63) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(d);
    }
  }
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) v[i] = get_as_int64(i);
  return v;
}

namespace {
void store_double(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::f32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::f16: t.data<uint16_t>()[i] = float_to_half(static_cast<float>(v)); break;
    case DType::bf16: t.data<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(v)); break;
    case DType::i8: t.data<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::i32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::i64: t.data<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::boolean: t.data<uint8_t>()[i] = v != 0.0; break;
    case DType::f64: t.data<double>()[i] = v; break;
    case DType::i16: t.data<int16_t>()[i] = static_cast<int16_t>(v); break;
    case DType::u8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::u16: t.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
    case DType::u32: t.data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
    case DType::u64: t.data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
    case DType::str: break;  // Cast to and from strings is refused before it gets here
  }
}
}  // namespace

Tensor Tensor::cast(DType to) const {
  if (to == dtype()) return clone();
  Tensor out(to, shape());
  bool int_to_int = (is_integer(dtype()) || dtype() == DType::boolean) &&
                    (is_integer(to) || to == DType::boolean);
  for (int64_t i = 0; i < numel(); ++i) {
    if (int_to_int) {
      int64_t v = get_as_int64(i);
      switch (to) {
        case DType::i8: out.data<int8_t>()[i] = static_cast<int8_t>(v); break;
        case DType::i32: out.data<int32_t>()[i] = static_cast<int32_t>(v); break;
        case DType::i64: out.data<int64_t>()[i] = v; break;
        case DType::i16: out.data<int16_t>()[i] = static_cast<int16_t>(v); break;
        case DType::u8: out.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
        case DType::u16: out.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
        case DType::u32: out.data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
        case DType::u64: out.data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
        default: out.data<uint8_t>()[i] = v != 0; break;
      }
    } else {
      store_double(out, i, get_as_double(i));
    }
  }
  return out;
}

bool Tensor::identical(const Tensor& other) const {
  if (type_ != other.type_) return false;
  if (empty() || other.empty()) return empty() == other.empty();
  if (dtype() == DType::str)
    return std::equal(data<std::string>(), data<std::string>() + numel(),
                      other.data<std::string>());
  return std::memcmp(data_, other.data_, bytes()) == 0;
}

}  // namespace collage
