// Batch rows of a dynamic-batch run: buffers of a larger plan's batch, the rows copied in and out
// of them, and a tensor's description at another batch.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "program.h"

namespace collage::rt {

// A zeroed byte buffer released with free(); 64-byte aligned like an arena. Zero rows of a str
// tensor are empty strings.
struct RowBuffer {
  explicit RowBuffer(uint64_t bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 127) / 64 * 64))) {
    if (data) std::memset(data, 0, (bytes + 127) / 64 * 64);
  }
  ~RowBuffer() { std::free(data); }
  RowBuffer(const RowBuffer&) = delete;
  RowBuffer& operator=(const RowBuffer&) = delete;
  RowBuffer(RowBuffer&& o) noexcept : data(o.data) { o.data = nullptr; }
  uint8_t* data;
};

// `info` with `batch` rows on `axis` (-1: unchanged).
inline TensorInfo with_batch(const TensorInfo& info, int32_t axis, int64_t batch) {
  TensorInfo t = info;
  if (axis < 0 || info.shape[axis] == batch) return t;
  t.bytes = t.bytes / static_cast<uint64_t>(info.shape[axis]) * static_cast<uint64_t>(batch);
  t.shape[axis] = batch;
  return t;
}

// Copies the first `rows` rows along `axis` between a tensor with `rows` of them (`small`) and
// one of shape `shape` (`large`), in either direction.
inline void copy_rows(const std::vector<int64_t>& shape, int32_t axis, int64_t rows, size_t esize,
                      uint8_t* large, uint8_t* small, bool to_large) {
  uint64_t outer = 1, inner = esize;
  for (int32_t d = 0; d < static_cast<int32_t>(shape.size()); ++d) {
    if (d < axis) outer *= static_cast<uint64_t>(shape[d]);
    if (d > axis) inner *= static_cast<uint64_t>(shape[d]);
  }
  const uint64_t block = static_cast<uint64_t>(rows) * inner;
  const uint64_t stride = static_cast<uint64_t>(shape[axis]) * inner;
  for (uint64_t o = 0; o < outer; ++o) {
    if (to_large) std::memcpy(large + o * stride, small + o * block, block);
    else std::memcpy(small + o * block, large + o * stride, block);
  }
}

}  // namespace collage::rt
