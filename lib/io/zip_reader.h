// Reading ZIP archives held in memory: the central directory (zip64 included) and the contents
// of stored or deflate-compressed members.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace collage::io {

struct ZipMember {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t data_offset = 0;  // where the member's (compressed) bytes start in the archive
};

// Lists the members in central-directory order. Every offset and size is checked against the
// archive, including each member's local header, so read_zip_member() never reads out of range.
// Malformed, multi-disk, or encrypted archives, unsupported compression methods and duplicate
// names are InvalidArgument errors; messages do not name the file (the caller adds it).
absl::StatusOr<std::vector<ZipMember>> list_zip_members(std::span<const uint8_t> archive);

// A member's uncompressed contents: a view into the archive for a stored member, or a
// decompressed, 64-byte aligned, writable buffer kept alive by `owner`.
struct ZipMemberBytes {
  std::span<const uint8_t> bytes;
  std::shared_ptr<void> owner;
};

// Extracts one member listed by list_zip_members() on the same archive and checks its CRC-32.
// Errors name the member.
absl::StatusOr<ZipMemberBytes> read_zip_member(std::span<const uint8_t> archive,
                                               const ZipMember& member);

}  // namespace collage::io
