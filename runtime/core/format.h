// The fixed binary layout of an artifact file: header, section table, section kinds and the
// alignment rules (docs/artifact-format.md). Shared by the compiler's writer and the runtime's
// reader; plain C++ with no dependencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace collage::artifact {

inline constexpr char kMagic[8] = {'C', 'O', 'L', 'L', 'A', 'G', 'E', '\0'};
// Version 2 added Dynamic tensor storage (data-dependent shapes). A writer gives version 2 only
// to a plan with such tensors, so that a runtime reading version 1 still loads every other one.
// Version 3 added STRING tensors (collage_string_t elements) and string constants, likewise
// given only to a plan that has them.
inline constexpr uint32_t kFormatVersion = 3;     // the newest version this code reads
inline constexpr uint32_t kMinFormatVersion = 1;  // the oldest
inline constexpr size_t kHeaderBytes = 64;
inline constexpr size_t kSectionEntryBytes = 32;
inline constexpr uint32_t kMaxSections = 16;
// Every section starts at a multiple of this; constants inside their section too, so they can be
// used straight from a memory map.
inline constexpr size_t kAlignment = 64;
inline constexpr size_t kProducerBytes = 24;

enum class SectionKind : uint32_t { plan = 1, constants = 2, native_code = 3 };
// Section flag: a reader that does not know the section's kind may skip it.
inline constexpr uint32_t kSectionOptional = 1;

// Byte offsets of the header fields.
namespace header {
inline constexpr size_t magic = 0;
inline constexpr size_t format_version = 8;
inline constexpr size_t abi_version = 12;  // COLLAGE_RT_MODULE_ABI_VERSION the kernels need
inline constexpr size_t header_size = 16;  // header + section table
inline constexpr size_t section_count = 20;
inline constexpr size_t file_size = 24;
inline constexpr size_t producer = 32;  // NUL-padded ASCII
inline constexpr size_t flags = 56;
inline constexpr size_t header_crc = 60;  // CRC-32C of [0, header_size) with this field zero
}  // namespace header

// Byte offsets inside one section-table entry.
namespace entry {
inline constexpr size_t kind = 0;
inline constexpr size_t flags = 4;
inline constexpr size_t offset = 8;
inline constexpr size_t size = 16;
inline constexpr size_t crc = 24;
inline constexpr size_t reserved = 28;
}  // namespace entry

// Little-endian loads and stores (the format is little-endian on every host).
inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline uint64_t load_u64(const uint8_t* p) {
  return static_cast<uint64_t>(load_u32(p)) | static_cast<uint64_t>(load_u32(p + 4)) << 32;
}
inline void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_u64(uint8_t* p, uint64_t v) {
  store_u32(p, static_cast<uint32_t>(v));
  store_u32(p + 4, static_cast<uint32_t>(v >> 32));
}

inline constexpr uint64_t align_up(uint64_t n, uint64_t a = kAlignment) {
  return (n + a - 1) / a * a;
}

}  // namespace collage::artifact
