// f16 and bf16 elements in the dynamic module: stored as their bits, computed in float. A value
// made from a float rounds to the type (to nearest even), so an operation written once for float
// and double gives what the reference gives on 16-bit floats: the result computed in float and
// rounded to the type, as each ONNX node rounds its output.
#pragma once

#include <cstdint>
#include <type_traits>

#include "half_bits.h"

namespace collage::rt_dynamic {

struct F16 {
  uint16_t bits = 0;
  F16() = default;
  explicit F16(float f) : bits(half_bits::float_to_half(f)) {}
  operator float() const { return half_bits::half_to_float(bits); }
};

struct BF16 {
  uint16_t bits = 0;
  BF16() = default;
  explicit BF16(float f) : bits(half_bits::float_to_bfloat16(f)) {}
  operator float() const { return half_bits::bfloat16_to_float(bits); }
};

// Float element types, 16-bit ones included (std::is_floating_point_v does not know them).
template <typename T>
inline constexpr bool kFloatElement =
    std::is_floating_point_v<T> || std::is_same_v<T, F16> || std::is_same_v<T, BF16>;

}  // namespace collage::rt_dynamic
