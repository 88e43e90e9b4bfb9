// Attribute struct of QuantizeLinear and DequantizeLinear.
#pragma once

#include <cstdint>
#include <string>

#include "collage/attrs.h"

namespace collage {

// QuantizeLinear(x, scale, [zero_point]): saturate(round_half_even(x / scale) + zero_point);
// DequantizeLinear(x, scale, [zero_point]): (x - zero_point) * scale. scale (and zero_point) is
// one value, one per index of `axis`, or (block_size > 0) one per block of block_size indices of
// `axis`. The quantized type is zero_point's, else output_dtype (a dtype name), else u8; the
// dequantized type is output_dtype, else scale's.
struct QuantizeAttrs : AttrsOf<QuantizeAttrs> {
  int64_t axis = 1;
  int64_t block_size = 0;
  std::string output_dtype;
  int64_t saturate = 1;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("block_size", block_size);
    v.field("output_dtype", output_dtype);
    v.field("saturate", saturate);
  }
};

}  // namespace collage
