// decode_artifact: the file layer (header, section table, checksums), then the plan.
#include <algorithm>
#include <cstring>
#include <vector>

#include "collage/runtime_module.h"
#include "crc32c.h"
#include "format.h"
#include "plan_decode.h"

namespace collage::rt {
namespace {

using namespace collage::artifact;

// A bound on the header size of any format version, so that a damaged size field cannot make
// the checksum read far.
constexpr uint32_t kMaxHeaderBytes = 1 << 20;

struct SectionRef {
  uint32_t kind;
  uint32_t flags;
  uint64_t offset;
  uint64_t size;
  uint32_t crc;
};

const char* section_name(uint32_t kind) {
  switch (static_cast<SectionKind>(kind)) {
    case SectionKind::plan:
      return "plan";
    case SectionKind::constants:
      return "constants";
    case SectionKind::native_code:
      return "native code";
  }
  return "unknown";
}

Status read_header(std::span<const uint8_t> bytes, std::vector<SectionRef>* sections,
                   std::string* producer, uint32_t* format_version) {
  const uint8_t* p = bytes.data();
  if (bytes.size() < 8 || std::memcmp(p, kMagic, sizeof kMagic) != 0)
    return error(Code::corrupt, "not a collage artifact (no \"COLLAGE\" magic at the start)");
  if (bytes.size() < kHeaderBytes)
    return error(Code::corrupt, "truncated artifact: ", bytes.size(),
                 " bytes, less than the 64-byte header");
  // Only the fields every format version keeps in place are used before the checksum and the
  // version have been checked.
  const uint32_t header_size = load_u32(p + header::header_size);
  if (header_size < kHeaderBytes || header_size > kMaxHeaderBytes)
    return error(Code::corrupt, "corrupt artifact header: header size ", header_size);
  if (header_size > bytes.size())
    return error(Code::corrupt, "truncated artifact: ", bytes.size(),
                 " bytes, less than its header and section table (", header_size, " bytes)");
  // The checksum covers the header and the section table with the checksum field as zero.
  uint8_t crc_field[4] = {0, 0, 0, 0};
  uint32_t crc = crc32c(p, header::header_crc);
  crc = crc32c(crc_field, 4, crc);
  crc = crc32c(p + header::header_crc + 4, header_size - header::header_crc - 4, crc);
  if (crc != load_u32(p + header::header_crc))
    return error(Code::corrupt, "corrupt artifact: header checksum mismatch");
  const uint32_t version = load_u32(p + header::format_version);
  if (version < kMinFormatVersion || version > kFormatVersion)
    return error(Code::unsupported, "artifact format version ", version,
                 "; this runtime reads versions ", kMinFormatVersion, " to ", kFormatVersion);
  *format_version = version;
  const uint32_t abi = load_u32(p + header::abi_version);
  if (abi != COLLAGE_RT_MODULE_ABI_VERSION)
    return error(Code::unsupported, "artifact needs runtime module ABI version ", abi,
                 "; this runtime provides version ", COLLAGE_RT_MODULE_ABI_VERSION);
  const uint64_t file_size = load_u64(p + header::file_size);
  if (file_size != bytes.size())
    return error(
        Code::corrupt,
        file_size > bytes.size() ? "truncated artifact: " : "artifact with trailing data: ",
        "the header says ", file_size, " bytes, the file has ", bytes.size());
  const uint32_t count = load_u32(p + header::section_count);
  if (count > kMaxSections || header_size != kHeaderBytes + kSectionEntryBytes * count)
    return error(Code::corrupt, "corrupt artifact header: ", count, " sections in a ", header_size,
                 "-byte header");
  const char* name = reinterpret_cast<const char*>(p + header::producer);
  producer->assign(name, strnlen(name, kProducerBytes));

  std::vector<SectionRef> covered;  // every section, known or skipped
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* e = p + kHeaderBytes + kSectionEntryBytes * i;
    SectionRef s{load_u32(e + entry::kind), load_u32(e + entry::flags), load_u64(e + entry::offset),
                 load_u64(e + entry::size), load_u32(e + entry::crc)};
    const std::string what = cat("section ", i, " (", section_name(s.kind), ")");
    if (s.offset % kAlignment != 0 || s.offset < header_size || s.offset > file_size ||
        s.size > file_size - s.offset)
      return error(Code::corrupt, "corrupt artifact: ", what, " at offset ", s.offset, " size ",
                   s.size, " lies outside the ", file_size, "-byte file or is misaligned");
    if (load_u32(e + entry::reserved) != 0 || (s.flags & ~kSectionOptional) != 0)
      return error(Code::corrupt, "corrupt artifact: ", what, " has reserved bits set");
    const bool known = s.kind >= static_cast<uint32_t>(SectionKind::plan) &&
                       s.kind <= static_cast<uint32_t>(SectionKind::native_code);
    if (!known && !(s.flags & kSectionOptional))
      return error(Code::unsupported, "artifact ", what, " of kind ", s.kind,
                   " is required, and this runtime does not know it");
    for (const SectionRef& other : covered) {
      if (known && other.kind == s.kind)
        return error(Code::corrupt, "corrupt artifact: two ", section_name(s.kind), " sections");
      if (s.offset < other.offset + other.size && other.offset < s.offset + s.size)
        return error(Code::corrupt, "corrupt artifact: ", what, " overlaps another section");
    }
    if (crc32c(p + s.offset, s.size) != s.crc)
      return error(Code::corrupt, "corrupt artifact: ", what, " checksum mismatch");
    covered.push_back(s);
    if (known) sections->push_back(s);
  }
  // Bytes outside the header and the sections are padding and must be zero, so that no bit of
  // the file escapes a check.
  std::sort(covered.begin(), covered.end(),
            [](const SectionRef& a, const SectionRef& b) { return a.offset < b.offset; });
  uint64_t pos = header_size;
  covered.push_back({0, 0, file_size, 0, 0});
  for (const SectionRef& s : covered) {
    for (; pos < s.offset; ++pos)
      if (p[pos] != 0)
        return error(Code::corrupt, "corrupt artifact: nonzero padding byte at offset ", pos);
    pos = std::max(pos, s.offset + s.size);
  }
  return Status();
}

}  // namespace

Status decode_artifact(std::span<const uint8_t> bytes, Program* program) {
  std::vector<SectionRef> sections;
  COLLAGE_RT_RETURN_IF_ERROR(
      read_header(bytes, &sections, &program->producer, &program->format_version));
  std::span<const uint8_t> plan, constants;
  for (const SectionRef& s : sections) {
    std::span<const uint8_t> data = bytes.subspan(s.offset, s.size);
    switch (static_cast<SectionKind>(s.kind)) {
      case SectionKind::plan:
        plan = data;
        break;
      case SectionKind::constants:
        constants = data;
        break;
      case SectionKind::native_code:
        program->native_code = data;
        break;
    }
  }
  if (plan.empty()) return error(Code::corrupt, "corrupt artifact: no plan section");
  COLLAGE_RT_RETURN_IF_ERROR(decode_plan(plan, constants, program));
  for (Program& v : program->variants) {
    v.producer = program->producer;
    v.format_version = program->format_version;
    v.native_code = program->native_code;
    COLLAGE_RT_RETURN_IF_ERROR(check_program(v));
  }
  return check_program(*program);
}

}  // namespace collage::rt
