// Sliding-window geometry shared by Conv and the pooling operators.
#include "ops/nn_window.h"

#include <algorithm>

#include "core/str_cat.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

// Rounds up for any `a` and b > 0 without forming a + b (a stride near 2^63 overflowed it).
int64_t ceil_div(int64_t a, int64_t b) {
  return a / b + (a % b > 0);
}

}  // namespace

absl::StatusOr<Shape> per_axis_list(std::string_view name, std::span<const int64_t> v, int64_t rank,
                                    int64_t fallback, int64_t min) {
  if (v.empty()) return Shape(rank, fallback);
  if (static_cast<int64_t>(v.size()) != rank)
    return absl::InvalidArgumentError(
        str_cat(name, " has ", v.size(), " values, expected ", rank, " (one per spatial axis)"));
  for (int64_t x : v)
    if (x < min)
      return absl::InvalidArgumentError(
          str_cat(name, " ", list_to_string(Shape(v.begin(), v.end())), " must be >= ", min));
  return Shape(v.begin(), v.end());
}

absl::Status check_auto_pad(std::string_view auto_pad) {
  if (auto_pad == "NOTSET" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" ||
      auto_pad == "VALID")
    return absl::OkStatus();
  return absl::InvalidArgumentError(
      str_cat("auto_pad '", auto_pad, "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
}

absl::StatusOr<Window> resolve_window(const Shape& in, const Shape& kernel, const WindowAttrs& a) {
  if (absl::Status s = check_auto_pad(a.auto_pad); !s.ok()) return s;
  const int64_t rank = static_cast<int64_t>(in.size());
  Window w;
  w.in = in;
  w.kernel = kernel;
  for (int64_t i = 0; i < rank; ++i)
    if (kernel[i] < 1)
      return absl::InvalidArgumentError(
          str_cat("kernel shape ", list_to_string(kernel), " must be positive"));
  auto stride = per_axis_list("strides", a.strides, rank, 1, 1);
  if (!stride.ok()) return stride.status();
  auto dilation = per_axis_list("dilations", a.dilations, rank, 1, 1);
  if (!dilation.ok()) return dilation.status();
  w.stride = *std::move(stride);
  w.dilation = *std::move(dilation);
  w.pad_begin.assign(rank, 0);
  w.pad_end.assign(rank, 0);
  w.out.assign(rank, 0);

  if (a.auto_pad == "NOTSET") {
    if (!a.pads.empty()) {
      if (static_cast<int64_t>(a.pads.size()) != 2 * rank)
        return absl::InvalidArgumentError(str_cat("pads has ", a.pads.size(), " values, expected ",
                                                  2 * rank,
                                                  " (begin and end of each spatial axis)"));
      for (int64_t i = 0; i < rank; ++i) {
        w.pad_begin[i] = a.pads[i];
        w.pad_end[i] = a.pads[rank + i];
        if (w.pad_begin[i] < 0 || w.pad_end[i] < 0)
          return absl::InvalidArgumentError(str_cat(
              "pads ", list_to_string(Shape(a.pads.begin(), a.pads.end())), " must be >= 0"));
      }
    }
  }
  for (int64_t i = 0; i < rank; ++i) {
    // With overflow checks: attributes near the int64 limits must not wrap the geometry.
    int64_t extent = 0, padded = 0;
    if (__builtin_mul_overflow(kernel[i] - 1, w.dilation[i], &extent) ||
        __builtin_add_overflow(extent, 1, &extent) ||
        __builtin_add_overflow(in[i], w.pad_begin[i], &padded) ||
        __builtin_add_overflow(padded, w.pad_end[i], &padded))
      return absl::InvalidArgumentError(
          str_cat("kernel ", kernel[i], ", dilation ", w.dilation[i], " and pads ",
                  w.pad_begin[i], ", ", w.pad_end[i], " of spatial axis ", i,
                  " overflow int64"));
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      w.out[i] = ceil_div(in[i], w.stride[i]);
      // (out - 1) * stride + extent - in, ordered so that no step overflows: the last window
      // starts before the end of the input.
      const int64_t total = std::max<int64_t>(0, extent - (in[i] - (w.out[i] - 1) * w.stride[i]));
      w.pad_begin[i] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    if (extent > padded)
      return absl::InvalidArgumentError(
          str_cat("kernel ", extent, w.dilation[i] > 1 ? " (dilated)" : "",
                  " is larger than padded input ", padded, " on spatial axis ", i));
    if (!a.ceil_mode) {
      w.out[i] = (padded - extent) / w.stride[i] + 1;
    } else {
      w.out[i] = ceil_div(padded - extent, w.stride[i]) + 1;
      // The last window must start inside the input or its begin padding.
      if ((w.out[i] - 1) * w.stride[i] >= in[i] + w.pad_begin[i]) --w.out[i];
    }
  }
  return w;
}

Window3 to_3d(const Window& w) {
  Window3 r;
  const int64_t lead = 3 - w.rank();
  for (int64_t i = 0; i < 3; ++i) {
    const bool unit = i < lead;
    const int64_t j = i - lead;
    r.in[i] = unit ? 1 : w.in[j];
    r.kernel[i] = unit ? 1 : w.kernel[j];
    r.stride[i] = unit ? 1 : w.stride[j];
    r.dilation[i] = unit ? 1 : w.dilation[j];
    r.pad[i] = unit ? 0 : w.pad_begin[j];
    r.out[i] = unit ? 1 : w.out[j];
  }
  return r;
}

std::pair<int64_t, int64_t> valid_range(int64_t offset, int64_t stride, int64_t extent,
                                        int64_t count) {
  const int64_t lo = offset >= 0 ? 0 : ceil_div(-offset, stride);
  const int64_t hi = offset >= extent ? 0 : ceil_div(extent - offset, stride);
  const int64_t h = std::clamp<int64_t>(hi, 0, count);
  return {std::min(lo, h), h};
}

}  // namespace collage::ops
