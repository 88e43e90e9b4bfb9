// Sliding-window geometry (kernel, strides, dilations, pads, auto_pad) of convolution and pooling.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "collage/tensor.h"

namespace collage::ops {

// Resolved geometry, one entry per spatial axis.
struct Window {
  Shape in, kernel, stride, dilation, pad_begin, pad_end, out;
  int64_t rank() const { return static_cast<int64_t>(in.size()); }
};

// Window attributes as ONNX gives them; empty lists take their defaults (1 / 0).
struct WindowAttrs {
  std::string_view auto_pad = "NOTSET";  // NOTSET, SAME_UPPER, SAME_LOWER, VALID
  std::span<const int64_t> strides;
  std::span<const int64_t> dilations;
  std::span<const int64_t> pads;  // begins of every axis, then ends
  bool ceil_mode = false;
};

// Applies defaults and auto_pad, and computes the output size of every spatial axis.
// Errors are InvalidArgument messages without an operator prefix (callers add it), e.g.
// "kernel 5 is larger than padded input 4 on spatial axis 1".
absl::StatusOr<Window> resolve_window(const Shape& in, const Shape& kernel, const WindowAttrs& a);

// Reads an optional per-axis attribute list: empty means `fallback` on every axis; a wrong
// length or a value below `min` is an InvalidArgument error naming the attribute.
absl::StatusOr<Shape> per_axis_list(std::string_view name, std::span<const int64_t> v, int64_t rank,
                                    int64_t fallback, int64_t min);

// Checks an auto_pad value; InvalidArgument naming the value otherwise.
absl::Status check_auto_pad(std::string_view auto_pad);

// The geometry with unit axes prepended so that kernels loop over exactly three spatial axes
// (a 1-D window becomes 1 x 1 x W). `pad` holds the begin pads.
struct Window3 {
  std::array<int64_t, 3> in, kernel, stride, dilation, pad, out;
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};
Window3 to_3d(const Window& w);

// The range [lo, hi) of o in [0, count) for which offset + o * stride lies in [0, extent)
// (stride > 0). Used to split window loops into an in-bounds middle and padded edges.
std::pair<int64_t, int64_t> valid_range(int64_t offset, int64_t stride, int64_t extent,
                                        int64_t count);

}  // namespace collage::ops
