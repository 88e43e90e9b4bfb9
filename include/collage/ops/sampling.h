// Attribute struct of GridSample.
#pragma once

#include <cstdint>
#include <string>

#include "collage/attrs.h"

namespace collage {

// GridSample(X [N, C, D1..Dr], grid [N, O1..Or, r]) -> [N, C, O1..Or]: X sampled at the
// normalised coordinates of grid (last axis first, -1 and 1 the edges: the outer edges of the
// edge pixels, or their centres with align_corners). mode "linear", "nearest" (halves to even)
// or "cubic" (Keys, a = -0.75); padding_mode "zeros", "border" or "reflection" says what lies
// outside X.
struct GridSampleAttrs : AttrsOf<GridSampleAttrs> {
  std::string mode = "linear";
  std::string padding_mode = "zeros";
  int64_t align_corners = 0;
  template <class V>
  void fields(V& v) {
    v.field("mode", mode);
    v.field("padding_mode", padding_mode);
    v.field("align_corners", align_corners);
  }
};

}  // namespace collage
