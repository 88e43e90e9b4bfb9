// The file layer of an artifact: header, section table and 64-byte aligned sections with their
// CRC-32C checksums (docs/artifact-format.md). Used by the writer, and by tests that build
// artifacts by hand.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "format.h"

namespace collage::artifact {

struct FileSection {
  uint32_t kind = 0;   // SectionKind
  uint32_t flags = 0;  // kSectionOptional
  std::string bytes;
};

// A section given as pieces: `size` bytes, each piece's bytes at its offset, zeros elsewhere.
// The pieces are not owned: they must outlive the FileLayout made of them.
struct SectionPieces {
  uint32_t kind = 0;   // SectionKind
  uint32_t flags = 0;  // kSectionOptional
  uint64_t size = 0;
  std::vector<std::pair<uint64_t, std::string_view>> pieces;  // ascending, disjoint, within size
};

// A file laid out over its sections' pieces, where they lie: header and section table made,
// checksums taken, the sections' bytes not copied. So a large constants section goes to disk
// (write) without first being copied into one buffer with the rest of the file.
class FileLayout {
 public:
  // The format version is the oldest that can hold the plan (format.h).
  explicit FileLayout(std::vector<SectionPieces> sections,
                      uint32_t format_version = kMinFormatVersion);

  uint64_t size() const { return size_; }
  // The file's bytes, in order, handed to `out` in pieces (padding in short runs of zeros);
  // the first error `out` returns stops the write and is returned.
  absl::Status write(const std::function<absl::Status(std::string_view)>& out) const;
  // The whole file in one buffer.
  std::string bytes() const;

 private:
  std::vector<SectionPieces> sections_;
  std::vector<uint64_t> offsets_;  // of each section in the file
  std::string head_;               // header and section table
  uint64_t size_ = 0;
};

// The complete file: header (format version, runtime-module ABI version, producer "collage
// <version>"), section table, the sections in the order given, zero padding between them. The
// format version is the oldest that can hold the plan (format.h).
std::string assemble_artifact(const std::vector<FileSection>& sections,
                              uint32_t format_version = kMinFormatVersion);

}  // namespace collage::artifact
