// assemble_artifact: header, section table, aligned sections, checksums.
#include "artifact/artifact_file.h"

#include <algorithm>
#include <cstring>

#include "collage/runtime_module.h"
#include "core/str_cat.h"
#include "crc32c.h"
#include "format.h"

namespace collage::artifact {

std::string assemble_artifact(const std::vector<FileSection>& sections,
                              uint32_t format_version) {
  const size_t table_end = kHeaderBytes + kSectionEntryBytes * sections.size();
  std::vector<uint64_t> offsets;
  uint64_t end = align_up(table_end);
  for (const FileSection& s : sections) {
    offsets.push_back(end);
    end = align_up(end + s.bytes.size());
  }
  std::string file(end, '\0');
  auto* p = reinterpret_cast<uint8_t*>(file.data());
  std::memcpy(p + header::magic, kMagic, sizeof kMagic);
  store_u32(p + header::format_version, format_version);
  store_u32(p + header::abi_version, COLLAGE_RT_MODULE_ABI_VERSION);
  store_u32(p + header::header_size, static_cast<uint32_t>(table_end));
  store_u32(p + header::section_count, static_cast<uint32_t>(sections.size()));
  store_u64(p + header::file_size, end);
  const std::string producer = str_cat("collage ", COLLAGE_VERSION);
  std::memcpy(p + header::producer, producer.data(), std::min(producer.size(), kProducerBytes - 1));
  for (size_t i = 0; i < sections.size(); ++i) {
    uint8_t* e = p + kHeaderBytes + kSectionEntryBytes * i;
    const std::string& bytes = sections[i].bytes;
    store_u32(e + entry::kind, sections[i].kind);
    store_u32(e + entry::flags, sections[i].flags);
    store_u64(e + entry::offset, offsets[i]);
    store_u64(e + entry::size, bytes.size());
    store_u32(e + entry::crc, crc32c(bytes.data(), bytes.size()));
    if (!bytes.empty()) std::memcpy(p + offsets[i], bytes.data(), bytes.size());
  }
  store_u32(p + header::header_crc, crc32c(p, table_end));
  return file;
}

}  // namespace collage::artifact
