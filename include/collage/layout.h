// Memory layouts of values passed between kernels: plain row-major, or channel-blocked (oneDNN's
// nChw16c and friends), which the native backend's convolution kernels read and write without
// repacking. A layout is a property of a value in the placed graph: the placement decides it where
// a group's inputs and outputs cross into other groups (assign_layouts, executor.h).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "collage/tensor.h"

namespace collage {

struct Layout {
  // 0: plain (dense row-major). b > 0: channel-blocked. The value has rank >= 3 and axis 1 (the
  // channels) is split into C / b blocks of b channels stored innermost:
  // [N][C/b][d2]...[d_last][b], element (n, c, i...) at ((n * C/b + c / b) * D + i) * b + c % b
  // with D the product of the spatial extents. C must be a multiple of b, so that the value takes
  // exactly the bytes of its plain layout.
  int32_t c_block = 0;

  bool plain() const { return c_block == 0; }
  bool operator==(const Layout&) const = default;

  static Layout channel_blocked(int32_t block) { return Layout{block}; }
};

// "plain", or oneDNN's name for the blocked layout of that rank: "nCw8c", "nChw16c", "nCdhw16c".
std::string layout_name(const Layout& layout, size_t rank);

// OK when `layout` can describe a value of type `type`; else InvalidArgument saying why (rank
// below 3, a block that does not divide the channels, a block size outside 1..64).
absl::Status check_layout(const Layout& layout, const TensorType& type);

// Reorders a row-major tensor into `layout` and back (tests, reference checks). `layout` must fit
// the tensor's type (check_layout); the result has the same type and holds the elements in the
// target order.
Tensor to_layout(const Tensor& plain, const Layout& layout);
Tensor from_layout(const Tensor& blocked, const Layout& layout);

}  // namespace collage
