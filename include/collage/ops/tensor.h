// Attribute structs of the tensor operators (shape manipulation and data movement). Field names
// are the ONNX attribute names; shape-like parameters that ONNX passes as inputs in newer opsets
// (Reshape's shape, Slice's starts/ends, Resize's scales, ...) are attributes here, and the
// importer fills them from constant inputs of the same name.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "collage/attrs.h"

namespace collage {

// Concat: joins every input along `axis` (negative counts from the end).
struct ConcatAttrs : AttrsOf<ConcatAttrs> {
  int64_t axis = 0;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
  }
};

// Split: cuts the input along `axis` into pieces of the sizes in `split`. Empty `split` means as
// many equal pieces as outputs were requested; when the axis does not divide evenly, every piece
// has ceil(size / outputs) elements and the last one takes the rest (ONNX 18).
struct SplitAttrs : AttrsOf<SplitAttrs> {
  int64_t axis = 0;
  std::vector<int64_t> split;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("split", split);
  }
};

// Slice with ONNX clamping: out-of-range starts/ends are clamped, negative ones count from the end
// of the axis, negative steps walk backwards. `axes` empty means 0..len(starts)-1; `steps` empty
// means all 1.
struct SliceAttrs : AttrsOf<SliceAttrs> {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<int64_t> axes;
  std::vector<int64_t> steps;
  template <class V>
  void fields(V& v) {
    v.field("starts", starts);
    v.field("ends", ends);
    v.field("axes", axes);
    v.field("steps", steps);
  }
};

// Gather(data, indices): takes the entries of `data` along `axis` named by `indices` (i32 or i64,
// negative counts from the end). An index out of range is a kernel error.
struct GatherAttrs : AttrsOf<GatherAttrs> {
  int64_t axis = 0;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
  }
};

// Reshape: a 0 in `shape` copies the input's dimension (unless allowzero is non-zero, then it
// is a real 0); one -1 is inferred from the element count.
struct ReshapeAttrs : AttrsOf<ReshapeAttrs> {
  std::vector<int64_t> shape;
  int64_t allowzero = 0;
  template <class V>
  void fields(V& v) {
    v.field("shape", shape);
    v.field("allowzero", allowzero);
  }
};

// Flatten: the output is 2-D, [prod(dims[:axis]), prod(dims[axis:])]; axis lies in [-rank, rank].
struct FlattenAttrs : AttrsOf<FlattenAttrs> {
  int64_t axis = 1;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
  }
};

// Transpose: output axis i is input axis perm[i]; empty perm reverses the axes.
struct TransposeAttrs : AttrsOf<TransposeAttrs> {
  std::vector<int64_t> perm;
  template <class V>
  void fields(V& v) {
    v.field("perm", perm);
  }
};

// Squeeze: removes the listed size-1 axes; empty removes every size-1 axis.
struct SqueezeAttrs : AttrsOf<SqueezeAttrs> {
  std::vector<int64_t> axes;
  template <class V>
  void fields(V& v) {
    v.field("axes", axes);
  }
};

// Unsqueeze: inserts size-1 axes at the listed positions of the output (negative counts from the
// end of the output rank).
struct UnsqueezeAttrs : AttrsOf<UnsqueezeAttrs> {
  std::vector<int64_t> axes;
  template <class V>
  void fields(V& v) {
    v.field("axes", axes);
  }
};

// Pad: `pads` is [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (2 * rank entries); negative
// pads crop. `mode` is "constant" (fill with `value`, converted to the element type), "reflect"
// (mirror without repeating the edge), "edge" (repeat the edge) or "wrap" (repeat the tensor
// periodically). As in ONNX Runtime, cropping is applied first and reflect/edge/wrap padding
// reads the cropped tensor. With `axes`, pads holds 2 * len(axes) entries for those axes.
struct PadAttrs : AttrsOf<PadAttrs> {
  std::vector<int64_t> pads;
  std::string mode = "constant";
  float value = 0.f;
  // The axes pads is given for ([begins..., ends...] of these); empty: every axis.
  std::vector<int64_t> axes;
  template <class V>
  void fields(V& v) {
    v.field("pads", pads);
    v.field("axes", axes);
    v.field("mode", mode);
    v.field("value", value);
  }
};

// Shape: the input's dimensions [start, end) as a 1-D i64 tensor; start and end are clamped and
// may be negative (counting from the rank).
struct ShapeAttrs : AttrsOf<ShapeAttrs> {
  int64_t start = 0;
  int64_t end = std::numeric_limits<int64_t>::max();
  template <class V>
  void fields(V& v) {
    v.field("start", start);
    v.field("end", end);
  }
};

// ConstantOfShape (no inputs): a tensor of `shape` filled with the single element of `value`,
// whose dtype is the output's; an empty `value` means f32 0.
struct ConstantOfShapeAttrs : AttrsOf<ConstantOfShapeAttrs> {
  std::vector<int64_t> shape;
  Tensor value;
  template <class V>
  void fields(V& v) {
    v.field("shape", shape);
    v.field("value", value);
  }
};

// Expand: broadcasts the input with `shape` in both directions (numpy rules); the output has the
// larger rank and, on each axis, the larger of the two sizes where one is 1.
struct ExpandAttrs : AttrsOf<ExpandAttrs> {
  std::vector<int64_t> shape;
  template <class V>
  void fields(V& v) {
    v.field("shape", shape);
  }
};

// Tile: repeats the input repeats[i] times along axis i (one entry per axis, each >= 0).
struct TileAttrs : AttrsOf<TileAttrs> {
  std::vector<int64_t> repeats;
  template <class V>
  void fields(V& v) {
    v.field("repeats", repeats);
  }
};

// Resize. `mode`: "nearest", "linear" (n-linear over every resized axis) or "cubic" (Keys cubic
// convolution with `cubic_coeff_a`; exclude_outside non-zero drops taps outside the input and
// renormalises). `coordinate_transformation_mode`: "half_pixel", "pytorch_half_pixel",
// "half_pixel_symmetric", "align_corners", "asymmetric", "tf_half_pixel_for_nn" or
// "tf_crop_and_resize" (which samples
// the region `roi` = [starts..., ends...] in normalised coordinates, empty = the whole input, and
// writes extrapolation_value outside the input). `nearest_mode`: "round_prefer_floor",
// "round_prefer_ceil", "floor" or "ceil" (a fraction within 1e-6 of one half is a tie). Exactly
// one of `scales` and `sizes` is non-empty, with one entry per axis; with scales the output size
// is floor(input * scale), the product taken in f32. As in ONNX Runtime, an axis whose scale is
// exactly 1 is not resampled, and a resize that changes no size is a copy.
struct ResizeAttrs : AttrsOf<ResizeAttrs> {
  std::string mode = "nearest";
  std::string coordinate_transformation_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  float cubic_coeff_a = -0.75f;
  int64_t exclude_outside = 0;
  float extrapolation_value = 0.f;
  std::vector<float> roi;
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  // 1: linear and cubic widen their filter by 1 / scale when downsampling (ONNX 18).
  int64_t antialias = 0;
  // ONNX 18: the axes that roi, scales and sizes are given for (empty: every axis, in order),
  // and with sizes whether one scale keeps the aspect ratio of those axes: "stretch" (no),
  // "not_larger" (the smallest of sizes / input) or "not_smaller" (the largest).
  std::vector<int64_t> axes;
  std::string keep_aspect_ratio_policy = "stretch";
  template <class V>
  void fields(V& v) {
    v.field("antialias", antialias);
    v.field("axes", axes);
    v.field("keep_aspect_ratio_policy", keep_aspect_ratio_policy);
    v.field("mode", mode);
    v.field("coordinate_transformation_mode", coordinate_transformation_mode);
    v.field("nearest_mode", nearest_mode);
    v.field("cubic_coeff_a", cubic_coeff_a);
    v.field("exclude_outside", exclude_outside);
    v.field("extrapolation_value", extrapolation_value);
    v.field("roi", roi);
    v.field("scales", scales);
    v.field("sizes", sizes);
  }
};

}  // namespace collage
