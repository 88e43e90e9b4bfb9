// Attribute structs of LpPool and MaxUnpool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/attrs.h"

namespace collage {

// LpPool(X): (sum of |x|^p over each window)^(1/p); padding contributes nothing. The window
// attributes are those of MaxPool.
struct LpPoolAttrs : AttrsOf<LpPoolAttrs> {
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0;
  std::vector<int64_t> dilations;
  std::vector<int64_t> kernel_shape;  // required
  int64_t p = 2;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
  template <class V>
  void fields(V& v) {
    v.field("auto_pad", auto_pad);
    v.field("ceil_mode", ceil_mode);
    v.field("dilations", dilations);
    v.field("kernel_shape", kernel_shape);
    v.field("p", p);
    v.field("pads", pads);
    v.field("strides", strides);
  }
};

// MaxUnpool(X, I, [output_shape]): zeros of the shape MaxPool came from ((in - 1) * stride +
// kernel - pads per spatial axis, or output_shape), with X's values written at the flat indices
// I that MaxPool gave (ONNX 9, 11 and 22).
struct MaxUnpoolAttrs : AttrsOf<MaxUnpoolAttrs> {
  std::vector<int64_t> kernel_shape;  // required
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
  template <class V>
  void fields(V& v) {
    v.field("kernel_shape", kernel_shape);
    v.field("pads", pads);
    v.field("strides", strides);
  }
};

}  // namespace collage
