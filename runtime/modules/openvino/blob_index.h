// BlobIndex: where long byte strings occur in a large buffer (an OpenVINO export blob), found by
// hashed blocks instead of a scan of the buffer per string. Recording a region of a transformer
// looks up each of its hundreds of weight constants in a blob of hundreds of MiB; with memmem,
// every constant the blob does not hold byte for byte scanned all of it (BERT-base, one region:
// 30 s of its 51 s artifact build on the AVX2 host).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace collage::rt_openvino {

class BlobIndex {
 public:
  // Indexes `blob` (borrowed: it must outlive the index) for strings of at least `min_size`
  // bytes: a hash of every block of min_size / 2 bytes that starts at a multiple of that size,
  // so that any such string, wherever it lies, covers one whole block.
  BlobIndex(std::string_view blob, size_t min_size);

  // Where `piece` occurs in the blob: the first occurrence at or after `from`, else the first
  // before it; npos when it does not occur. Where the blob repeats one block many times (runs of
  // zeros), only kMaxCandidates of the places whose blocks match are compared: the piece is then
  // found at one of its occurrences (at or after `from` where one of those is), not necessarily
  // the first, or, rarely, reported missing. A piece shorter than `min_size` is looked for by a
  // scan of the blob.
  size_t find(std::string_view piece, size_t from) const;

  static constexpr size_t kMaxCandidates = 256;

 private:
  std::string_view blob_;
  size_t block_;        // bytes per hashed block
  uint64_t top_power_;  // kBase^(block_ - 1): what a block's first byte weighs in its hash
  std::vector<std::pair<uint64_t, uint64_t>> blocks_;  // (hash, block number), sorted
};

}  // namespace collage::rt_openvino
