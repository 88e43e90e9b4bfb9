// Data-movement helpers of the tensor operators: strided copies that move contiguous runs with
// memcpy, gathers through per-axis offset tables, element fills, and registration plumbing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/op.h"
#include "collage/tensor.h"

namespace collage::ops {

// A strided view of a buffer, in elements: element [i0, i1, ...] lives at
// offset + i0 * strides[0] + i1 * strides[1] + ... Strides may be 0 (broadcast) or negative.
struct StridedView {
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// The row-major view of a dense tensor of `shape`, starting at element `offset`.
StridedView dense_view(const Shape& shape, int64_t offset = 0);

// Copies every element of `shape` from view `s` of `src` to view `d` of `dst` (elements of `esize`
// bytes). Axes that are contiguous in both views are merged first, so a run that is contiguous on
// both sides moves with one memcpy. The views must not overlap.
void copy_strided(const Shape& shape, size_t esize, void* dst, const StridedView& d,
                  const void* src, const StridedView& s);

// Row-major gather through per-axis tables: the output has shape (tables[0].size(), ...), and
// out[i0, i1, ...] = src[tables[0][i0] + tables[1][i1] + ...] (entries are element offsets). A
// negative entry marks a position outside the source; such elements are set to the `esize` bytes
// at `fill`, which must then be non-null. With no tables the single element src[0] is copied.
void gather_by_axis(size_t esize, void* dst, const void* src,
                    const std::vector<std::vector<int64_t>>& tables, const void* fill);

// Sets `n` elements of `esize` bytes to the element at `value`.
void fill_elements(void* dst, int64_t n, size_t esize, const void* value);

// Writes `v` as one element of type `t` into `out` (dtype_size(t) bytes): float types round,
// integers truncate toward zero and saturate, bool is v != 0.
void store_float_as(float v, DType t, void* out);

// Adds one of the built-in tensor operators (the names are fixed, so a clash is a bug).
void add_tensor_op(OpRegistry& r, OpDef def);

// Registration of each tensor operator file; register_tensor_ops calls them all.
void register_concat_split_ops(OpRegistry& r);  // Concat, Split
void register_slice_gather_ops(OpRegistry& r);  // Slice, Gather
void register_reshape_ops(OpRegistry& r);       // Reshape, Flatten, Squeeze, Unsqueeze
void register_transpose_op(OpRegistry& r);      // Transpose
void register_pad_op(OpRegistry& r);            // Pad
void register_expand_tile_ops(OpRegistry& r);   // Expand, Tile
void register_generator_ops(OpRegistry& r);     // Shape, ConstantOfShape, Range
void register_resize_op(OpRegistry& r);         // Resize

}  // namespace collage::ops
