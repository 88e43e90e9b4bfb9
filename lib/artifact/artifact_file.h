// The file layer of an artifact: header, section table and 64-byte aligned sections with their
// CRC-32C checksums (docs/artifact-format.md). Used by the writer, and by tests that build
// artifacts by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format.h"

namespace collage::artifact {

struct FileSection {
  uint32_t kind = 0;   // SectionKind
  uint32_t flags = 0;  // kSectionOptional
  std::string bytes;
};

// The complete file: header (format version, runtime-module ABI version, producer "collage
// <version>"), section table, the sections in the order given, zero padding between them. The
// format version is the oldest that can hold the plan (format.h).
std::string assemble_artifact(const std::vector<FileSection>& sections,
                              uint32_t format_version = kMinFormatVersion);

}  // namespace collage::artifact
