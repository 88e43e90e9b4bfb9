// Attribute struct of the two internal operators DynamicQuantizeLinear is split into when its
// input is large (lib/passes/split_dynamic_quantize.h): a range in chunks, then the scale and zero
// point; QuantizeLinear then quantizes with them. They have no ONNX name (never imported).
#pragma once

#include <cstdint>

#include "collage/attrs.h"

namespace collage {

// DynamicQuantizeRange(x): f32 [2, chunks, T] with T = the product of x's axes from `axis` on (1
// when axis is x's rank). Axis axis - 1 is cut into `chunks` equal ranges; entry [1, c, t] is the
// maximum of x, and [0, c, t] the maximum of -x, over the axes before `axis` with axis - 1 in
// range c, at position t of the trailing axes (row-major). 1 <= axis <= rank, and chunks divides
// x's axis axis - 1.
struct DynamicQuantizeRangeAttrs : AttrsOf<DynamicQuantizeRangeAttrs> {
  int64_t axis = 1;
  int64_t chunks = 1;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("chunks", chunks);
  }
};

// DynamicQuantizeParams(range) has no attributes: from such a range it gives DynamicQuantizeLinear's
// y_scale (f32 scalar) and y_zero_point (u8 scalar), computed as that operator computes them.

}  // namespace collage
