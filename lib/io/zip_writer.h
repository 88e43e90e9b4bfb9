// Writing uncompressed ZIP archives, switching to zip64 records where sizes or offsets need them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "io/file_io.h"

namespace collage::io {

struct ZipWriterOptions {
  // Write zip64 extra fields and end records even for a small archive (to test readers).
  bool force_zip64 = false;
};

// Appends stored members to `out` and then the central directory. Timestamps are fixed
// (1980-01-01) so equal inputs give identical archives. The writer does not own `out`.
class ZipWriter {
 public:
  explicit ZipWriter(AtomicFileWriter& out, ZipWriterOptions options = {})
      : out_(out), options_(options) {}

  // Adds a member whose contents are the concatenation of `pieces`. Names must be non-empty,
  // shorter than 64 KiB and unique (InvalidArgument otherwise).
  absl::Status add_stored(std::string_view name, std::span<const std::span<const uint8_t>> pieces);
  // Writes the central directory and the end records; call once, after the last member.
  absl::Status finish();

 private:
  struct Entry {
    std::string name;
    uint32_t crc32;
    uint64_t size;
    uint64_t offset;
  };
  AtomicFileWriter& out_;
  ZipWriterOptions options_;
  std::vector<Entry> entries_;
};

}  // namespace collage::io
