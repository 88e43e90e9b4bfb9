// The largest shape collage takes: fewer than 2^62 elements counting the positive dimensions.
// Within it, element counts, byte sizes and the stride of every axis fit in 64 bits, so no
// shape arithmetic after the check can overflow. An empty shape's other dimensions count too:
// Slice's strides of f32[0 x 2 x (2^63 - 1)] overflowed.
#pragma once

#include <cstdint>

#include "collage/tensor.h"

namespace collage {

// What an error says of a shape beyond the limit, after naming it.
inline constexpr const char* kBeyondElementLimit =
    "has 2^62 elements or more (counting its nonzero dimensions)";

inline bool shape_within_element_limit(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d > 0 && (__builtin_mul_overflow(n, d, &n) || n >= (int64_t{1} << 62))) return false;
  return true;
}

}  // namespace collage
