// Element type properties and 16-bit float conversions.
#include "collage/dtype.h"

#include <bit>
#include <cassert>
#include <string>

#include "half_bits.h"

namespace collage {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::bf16: return 2;
    case DType::i8: return 1;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::boolean: return 1;
    case DType::f64: return 8;
    case DType::i16: return 2;
    case DType::u8: return 1;
    case DType::u16: return 2;
    case DType::u32: return 4;
    case DType::u64: return 8;
    case DType::str: return sizeof(std::string);
  }
  assert(false && "unknown dtype");
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i8: return "i8";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
    case DType::f64: return "f64";
    case DType::i16: return "i16";
    case DType::u8: return "u8";
    case DType::u16: return "u16";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
    case DType::str: return "str";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes) {
    if (dtype_name(t) == name) return t;
  }
  return std::nullopt;
}

bool is_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64;
}
bool is_unsigned(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64;
}
bool is_integer(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64 || is_unsigned(t);
}

uint16_t float_to_half(float f) { return half_bits::float_to_half(f); }
float half_to_float(uint16_t h) { return half_bits::half_to_float(h); }
uint16_t float_to_bfloat16(float f) { return half_bits::float_to_bfloat16(f); }
float bfloat16_to_float(uint16_t b) { return half_bits::bfloat16_to_float(b); }

}  // namespace collage
