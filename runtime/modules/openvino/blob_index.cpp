// BlobIndex: polynomial hashes (mod 2^64) of the blob's aligned blocks, and a rolling hash over a
// piece's first two blocks' worth of bytes to meet them at whatever offset the piece lies.
#include "blob_index.h"

#include <algorithm>
#include <cstring>

namespace collage::rt_openvino {
namespace {

constexpr uint64_t kBase = 0x100000001b3ULL;  // odd, so the hash is a polynomial mod 2^64

uint64_t hash_bytes(const unsigned char* p, size_t n) {
  uint64_t h = 0;
  for (size_t i = 0; i < n; ++i) h = h * kBase + p[i];
  return h;
}

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

BlobIndex::BlobIndex(std::string_view blob, size_t min_size)
    : blob_(blob), block_(std::max<size_t>(1, min_size / 2)), top_power_(1) {
  for (size_t i = 1; i < block_; ++i) top_power_ *= kBase;
  const size_t n = blob.size() / block_;
  blocks_.reserve(n);
  for (size_t b = 0; b < n; ++b)
    blocks_.push_back({hash_bytes(bytes(blob) + b * block_, block_), b});
  std::sort(blocks_.begin(), blocks_.end());
}

size_t BlobIndex::find(std::string_view piece, size_t from) const {
  if (piece.size() > blob_.size()) return std::string_view::npos;
  if (piece.size() < 2 * block_) {  // it need not cover a whole block
    for (size_t start : {from, size_t{0}}) {
      if (start > blob_.size()) continue;
      const void* at =
          memmem(blob_.data() + start, blob_.size() - start, piece.data(), piece.size());
      if (at) return static_cast<size_t>(static_cast<const char*>(at) - blob_.data());
    }
    return std::string_view::npos;
  }
  // Piece offset q lies on a block boundary of the blob when the piece starts at block * block_
  // - q: the window piece[q, q + block_) is then that block.
  std::vector<size_t> candidates;
  const unsigned char* p = bytes(piece);
  uint64_t h = hash_bytes(p, block_);
  for (size_t q = 0; q < block_ && candidates.size() < kMaxCandidates; ++q) {
    if (q > 0) h = (h - p[q - 1] * top_power_) * kBase + p[q - 1 + block_];
    auto it = std::lower_bound(blocks_.begin(), blocks_.end(), std::pair<uint64_t, uint64_t>{h, 0});
    for (; it != blocks_.end() && it->first == h && candidates.size() < kMaxCandidates; ++it) {
      const uint64_t start = it->second * block_;
      if (start < q || start - q > blob_.size() - piece.size()) continue;
      candidates.push_back(start - q);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::rotate(candidates.begin(), std::lower_bound(candidates.begin(), candidates.end(), from),
              candidates.end());
  for (size_t at : candidates)
    if (std::memcmp(blob_.data() + at, piece.data(), piece.size()) == 0) return at;
  return std::string_view::npos;
}

}  // namespace collage::rt_openvino
