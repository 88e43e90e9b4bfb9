// FileLayout and assemble_artifact: header, section table, aligned sections, checksums.
#include "artifact/artifact_file.h"

#include <algorithm>
#include <cstring>

#include "collage/runtime_module.h"
#include "core/str_cat.h"
#include "crc32c.h"

namespace collage::artifact {
namespace {

constexpr char kZeros[kAlignment] = {};

// Calls `fn` on the bytes of `s` in order: its pieces, and the zeros around them in runs of at
// most kAlignment bytes. Stops at the first call that returns false, and returns false then.
template <typename Fn>
bool for_each_run(const SectionPieces& s, Fn&& fn) {
  uint64_t at = 0;
  auto zeros = [&](uint64_t to) {
    for (; at < to; at += std::min<uint64_t>(to - at, sizeof kZeros))
      if (!fn(std::string_view(kZeros, std::min<uint64_t>(to - at, sizeof kZeros)))) return false;
    return true;
  };
  for (const auto& [offset, bytes] : s.pieces) {
    if (!zeros(offset) || !fn(bytes)) return false;
    at += bytes.size();
  }
  return zeros(s.size);
}

}  // namespace

FileLayout::FileLayout(std::vector<SectionPieces> sections, uint32_t format_version)
    : sections_(std::move(sections)) {
  const size_t table_end = kHeaderBytes + kSectionEntryBytes * sections_.size();
  uint64_t end = align_up(table_end);
  for (const SectionPieces& s : sections_) {
    offsets_.push_back(end);
    end = align_up(end + s.size);
  }
  size_ = end;
  head_.assign(table_end, '\0');
  auto* p = reinterpret_cast<uint8_t*>(head_.data());
  std::memcpy(p + header::magic, kMagic, sizeof kMagic);
  store_u32(p + header::format_version, format_version);
  store_u32(p + header::abi_version, COLLAGE_RT_MODULE_ABI_VERSION);
  store_u32(p + header::header_size, static_cast<uint32_t>(table_end));
  store_u32(p + header::section_count, static_cast<uint32_t>(sections_.size()));
  store_u64(p + header::file_size, end);
  const std::string producer = str_cat("collage ", COLLAGE_VERSION);
  std::memcpy(p + header::producer, producer.data(), std::min(producer.size(), kProducerBytes - 1));
  for (size_t i = 0; i < sections_.size(); ++i) {
    uint8_t* e = p + kHeaderBytes + kSectionEntryBytes * i;
    uint32_t crc = 0;
    for_each_run(sections_[i], [&](std::string_view b) {
      crc = crc32c(b.data(), b.size(), crc);
      return true;
    });
    store_u32(e + entry::kind, sections_[i].kind);
    store_u32(e + entry::flags, sections_[i].flags);
    store_u64(e + entry::offset, offsets_[i]);
    store_u64(e + entry::size, sections_[i].size);
    store_u32(e + entry::crc, crc);
  }
  store_u32(p + header::header_crc, crc32c(p, table_end));
}

absl::Status FileLayout::write(const std::function<absl::Status(std::string_view)>& out) const {
  absl::Status status = out(head_);
  uint64_t at = head_.size();
  auto emit = [&](std::string_view b) {
    status = out(b);
    at += b.size();
    return status.ok();
  };
  auto pad_to = [&](uint64_t to) {
    return for_each_run(SectionPieces{0, 0, to - at, {}}, emit);
  };
  if (!status.ok()) return status;
  for (size_t i = 0; i < sections_.size(); ++i)
    if (!pad_to(offsets_[i]) || !for_each_run(sections_[i], emit)) return status;
  pad_to(size_);
  return status;
}

std::string FileLayout::bytes() const {
  std::string file(size_, '\0');
  std::memcpy(file.data(), head_.data(), head_.size());
  for (size_t i = 0; i < sections_.size(); ++i)
    for (const auto& [offset, bytes] : sections_[i].pieces)
      if (!bytes.empty()) std::memcpy(file.data() + offsets_[i] + offset, bytes.data(), bytes.size());
  return file;
}

std::string assemble_artifact(const std::vector<FileSection>& sections,
                              uint32_t format_version) {
  std::vector<SectionPieces> pieces;
  for (const FileSection& s : sections)
    pieces.push_back({s.kind, s.flags, s.bytes.size(), {{0, std::string_view(s.bytes)}}});
  return FileLayout(std::move(pieces), format_version).bytes();
}

}  // namespace collage::artifact
