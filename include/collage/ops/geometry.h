// Attribute structs of CenterCropPad, AffineGrid, DeformConv and Col2Im.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/attrs.h"

namespace collage {

// CenterCropPad(X, shape) -> X cropped or zero-padded about its centre to `shape` on `axes`
// (empty: every axis; negative counts from the end); an odd difference puts the extra element
// at the end (ONNX 18).
struct CenterCropPadAttrs : AttrsOf<CenterCropPadAttrs> {
  std::vector<int64_t> axes;
  template <class V>
  void fields(V& v) {
    v.field("axes", axes);
  }
};

// AffineGrid(theta [N, 2, 3] or [N, 3, 4], size [N, C, H, W] or [N, C, D, H, W]) ->
// [N, H, W, 2] or [N, D, H, W, 3]: theta applied to the normalised coordinates (x, y[, z], 1) of
// every output point, -1 and 1 the outer edges of the edge pixels, or their centres with
// align_corners (ONNX 20). The grid GridSample takes.
struct AffineGridAttrs : AttrsOf<AffineGridAttrs> {
  int64_t align_corners = 0;
  template <class V>
  void fields(V& v) {
    v.field("align_corners", align_corners);
  }
};

// DeformConv(X [N, C, H, W], W [M, C/group, kH, kW], offset [N, 2 * offset_group * kH * kW,
// oH, oW], [B [M]], [mask [N, offset_group * kH * kW, oH, oW]]) (ONNX 19): a 2-D convolution
// whose every tap samples X bilinearly (zero outside) at its place moved by the offset (dh, dw
// pairs per offset group and tap, row-major over the kernel) and is weighted by the mask. The
// channels split into offset_group groups that share offsets.
struct DeformConvAttrs : AttrsOf<DeformConvAttrs> {
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape;  // empty: taken from W
  int64_t offset_group = 1;
  std::vector<int64_t> pads;  // begin values of every axis, then end values
  std::vector<int64_t> strides;
  template <class V>
  void fields(V& v) {
    v.field("dilations", dilations);
    v.field("group", group);
    v.field("kernel_shape", kernel_shape);
    v.field("offset_group", offset_group);
    v.field("pads", pads);
    v.field("strides", strides);
  }
};

// Col2Im(input [N, C * prod(block_shape), L], image_shape, block_shape) -> [N, C,
// image_shape...]: the inverse of im2col, each column's block added back at its sliding position
// (L positions over the padded image, row-major), overlapping blocks summed (ONNX 18).
struct Col2ImAttrs : AttrsOf<Col2ImAttrs> {
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // begin values of every axis, then end values
  std::vector<int64_t> strides;
  template <class V>
  void fields(V& v) {
    v.field("dilations", dilations);
    v.field("pads", pads);
    v.field("strides", strides);
  }
};

}  // namespace collage
