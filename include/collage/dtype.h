// Element types of collage tensors and their properties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace collage {

// The element types a collage value can have. f16 and bf16 are stored as raw 16-bit words. New
// types are appended: the numbering is stored in artifacts (the runtime knows f32 to boolean).
// `str` (ONNX STRING: UTF-8 byte strings, ai.onnx.ml pipelines' labels) is held in memory as
// std::string elements; in artifacts and at the runtime's C ABI its elements are
// collage_string_t (a pointer and a length; docs/onnx.md, docs/artifact-format.md).
enum class DType : uint8_t { f32, f16, bf16, i8, i32, i64, boolean, f64, i16, u8, u16, u32, u64, str };
// Every dtype, in enum order.
inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16, DType::i8,
                                       DType::i32, DType::i64, DType::boolean, DType::f64,
                                       DType::i16, DType::u8,  DType::u16, DType::u32,
                                       DType::u64, DType::str};

// Size of one element in bytes (for `str`, the in-memory std::string object).
size_t dtype_size(DType t);
// Short lower-case name ("f32", "i64", "bool").
std::string_view dtype_name(DType t);
// Inverse of dtype_name; nullopt for an unknown name.
std::optional<DType> parse_dtype(std::string_view name);
bool is_float(DType t);
// Signed and unsigned integers (not bool).
bool is_integer(DType t);
bool is_unsigned(DType t);

// Conversions between float and the 16-bit float formats (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);
float bfloat16_to_float(uint16_t b);

}  // namespace collage
