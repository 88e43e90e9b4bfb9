// Shared helpers for operator definitions: broadcasting, axes, dtype dispatch, typed loops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/op.h"
#include "collage/tensor.h"

namespace collage::ops {

// Numpy-style broadcast of two shapes; nullopt if incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// Broadcast of any number of shapes.
std::optional<Shape> broadcast_all(const std::vector<Shape>& shapes);
// Strides (in elements) to read `in` as if it had shape `out` (0 on broadcast axes).
// `in` must be broadcastable to `out`.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
// Maps a possibly negative axis into [0, rank); nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);

// Calls f(offset_a, offset_b, out_index) for every output element of the broadcast of a and b
// onto `out` (row-major), with the innermost axis handled in a tight loop.
template <typename F>
void for_each_broadcast(const Shape& a, const Shape& b, const Shape& out, F&& f) {
  const int64_t n = shape_numel(out);
  if (n == 0) return;
  if (a == out && b == out) {
    for (int64_t i = 0; i < n; ++i) f(i, i, i);
    return;
  }
  const auto sa = broadcast_strides(a, out), sb = broadcast_strides(b, out);
  const int rank = static_cast<int>(out.size());
  if (rank == 0) {
    f(0, 0, 0);
    return;
  }
  std::vector<int64_t> idx(rank, 0);
  const int64_t inner = out[rank - 1];
  const int64_t ia = sa[rank - 1], ib = sb[rank - 1];
  int64_t o = 0;
  while (o < n) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < rank - 1; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    for (int64_t j = 0; j < inner; ++j) f(oa + j * ia, ob + j * ib, o + j);
    o += inner;
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
}

// Dispatches on a dtype to a generic lambda taking a typed null pointer:
//   dispatch_dtype(t, [&](auto* tag) { using T = std::remove_pointer_t<decltype(tag)>; ... });
// f16/bf16 are stored as uint16_t and dispatched as such (kernels that compute convert).
template <typename F>
absl::Status dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(static_cast<float*>(nullptr)); return absl::OkStatus();
    case DType::i64: f(static_cast<int64_t*>(nullptr)); return absl::OkStatus();
    case DType::i32: f(static_cast<int32_t*>(nullptr)); return absl::OkStatus();
    case DType::i8: f(static_cast<int8_t*>(nullptr)); return absl::OkStatus();
    case DType::boolean: f(static_cast<uint8_t*>(nullptr)); return absl::OkStatus();
    case DType::f16:
    case DType::bf16: f(static_cast<uint16_t*>(nullptr)); return absl::OkStatus();
    case DType::f64: f(static_cast<double*>(nullptr)); return absl::OkStatus();
    case DType::i16: f(static_cast<int16_t*>(nullptr)); return absl::OkStatus();
    case DType::u8: f(static_cast<uint8_t*>(nullptr)); return absl::OkStatus();
    case DType::u16: f(static_cast<uint16_t*>(nullptr)); return absl::OkStatus();
    case DType::u32: f(static_cast<uint32_t*>(nullptr)); return absl::OkStatus();
    case DType::u64: f(static_cast<uint64_t*>(nullptr)); return absl::OkStatus();
    case DType::str: return absl::UnimplementedError("string tensors are not supported here");
  }
  return absl::InternalError("unknown dtype");
}

// Copies whole elements of any dtype: dst[i] = src[map(i)] style loops are written with bytes.
inline void copy_element(void* dst, int64_t di, const void* src, int64_t si, size_t esize) {
  auto* d = static_cast<unsigned char*>(dst) + di * static_cast<int64_t>(esize);
  auto* s = static_cast<const unsigned char*>(src) + si * static_cast<int64_t>(esize);
  for (size_t k = 0; k < esize; ++k) d[k] = s[k];
}

// "[1, 3, 224, 224]"-style text for error messages.
std::string list_to_string(const std::vector<int64_t>& v);

// Sets the attribute inputs of a built-in operator that has them (attr_inputs_builtin.cpp).
void declare_attr_inputs(OpDef& def);

}  // namespace collage::ops
