// ZIP archive writer for stored (uncompressed) members, with zip64 support.
#include "io/zip_writer.h"

#include <zlib.h>

#include "core/str_cat.h"
#include "io/le_bytes.h"
#include "io/zip_format.h"

namespace collage::io {
namespace {

using namespace zip;

constexpr uint16_t kVersion20 = 20;  // plain stored members
constexpr uint16_t kVersion45 = 45;  // zip64
constexpr uint16_t kMadeByUnix = 3 << 8;
constexpr uint16_t kFlagUtf8 = 1 << 11;
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
constexpr uint32_t kRegularFile0644 = 0100644u << 16;

uint16_t name_flags(std::string_view name) {
  for (char c : name)
    if (static_cast<unsigned char>(c) >= 0x80) return kFlagUtf8;
  return 0;
}

uint64_t clamp32(uint64_t v, bool zip64) {
  return zip64 || v >= kMax32 ? kMax32 : v;
}

}  // namespace

absl::Status ZipWriter::add_stored(std::string_view name,
                                   std::span<const std::span<const uint8_t>> pieces) {
  if (name.empty() || name.size() >= kMax16)
    return absl::InvalidArgumentError(
        str_cat("zip member name of ", name.size(), " bytes (must be 1..65534)"));
  for (const Entry& e : entries_)
    if (e.name == name)
      return absl::InvalidArgumentError(str_cat("zip member '", name, "' added twice"));
  Entry e{std::string(name), 0, 0, out_.offset()};
  uLong crc = crc32_z(0, nullptr, 0);
  for (auto p : pieces) {
    crc = crc32_z(crc, p.data(), p.size());
    e.size += p.size();
  }
  e.crc32 = static_cast<uint32_t>(crc);
  const bool zip64 = options_.force_zip64 || e.size >= kMax32;

  std::string h;
  store32(h, kLocalHeaderSig);
  store16(h, zip64 ? kVersion45 : kVersion20);
  store16(h, name_flags(name));
  store16(h, kMethodStored);
  store16(h, 0);  // time
  store16(h, kDosDate1980);
  store32(h, e.crc32);
  store32(h, clamp32(e.size, zip64));
  store32(h, clamp32(e.size, zip64));
  store16(h, name.size());
  store16(h, zip64 ? 20 : 0);
  h += name;
  if (zip64) {
    store16(h, kZip64ExtraId);
    store16(h, 16);
    store64(h, e.size);
    store64(h, e.size);
  }
  if (absl::Status s = out_.write(h); !s.ok()) return s;
  for (auto p : pieces)
    if (absl::Status s = out_.write(p); !s.ok()) return s;
  entries_.push_back(std::move(e));
  return absl::OkStatus();
}

absl::Status ZipWriter::finish() {
  const uint64_t dir_offset = out_.offset();
  std::string d;
  for (const Entry& e : entries_) {
    const bool big_size = options_.force_zip64 || e.size >= kMax32;
    const bool big_offset = options_.force_zip64 || e.offset >= kMax32;
    const bool zip64 = big_size || big_offset;
    std::string extra;
    if (zip64) {
      store16(extra, kZip64ExtraId);
      store16(extra, 8 * (2 * big_size + big_offset));
      if (big_size) {
        store64(extra, e.size);
        store64(extra, e.size);
      }
      if (big_offset) store64(extra, e.offset);
    }
    store32(d, kCentralHeaderSig);
    store16(d, kMadeByUnix | (zip64 ? kVersion45 : kVersion20));
    store16(d, zip64 ? kVersion45 : kVersion20);
    store16(d, name_flags(e.name));
    store16(d, kMethodStored);
    store16(d, 0);
    store16(d, kDosDate1980);
    store32(d, e.crc32);
    store32(d, clamp32(e.size, big_size));
    store32(d, clamp32(e.size, big_size));
    store16(d, e.name.size());
    store16(d, extra.size());
    store16(d, 0);  // comment length
    store16(d, 0);  // disk number
    store16(d, 0);  // internal attributes
    store32(d, kRegularFile0644);
    store32(d, clamp32(e.offset, big_offset));
    d += e.name;
    d += extra;
  }
  const uint64_t dir_size = d.size();
  const uint64_t count = entries_.size();
  const bool zip64 =
      options_.force_zip64 || count >= kMax16 || dir_offset >= kMax32 || dir_size >= kMax32;
  if (zip64) {
    const uint64_t end64_offset = dir_offset + dir_size;
    store32(d, kZip64EndSig);
    store64(d, kZip64EndSize - 12);  // size of the rest of this record
    store16(d, kMadeByUnix | kVersion45);
    store16(d, kVersion45);
    store32(d, 0);  // this disk
    store32(d, 0);  // disk with the directory
    store64(d, count);
    store64(d, count);
    store64(d, dir_size);
    store64(d, dir_offset);
    store32(d, kZip64LocatorSig);
    store32(d, 0);
    store64(d, end64_offset);
    store32(d, 1);  // total disks
  }
  store32(d, kEndSig);
  store16(d, 0);
  store16(d, 0);
  store16(d, zip64 ? kMax16 : count);
  store16(d, zip64 ? kMax16 : count);
  store32(d, clamp32(dir_size, zip64));
  store32(d, clamp32(dir_offset, zip64));
  store16(d, 0);  // comment length
  return out_.write(d);
}

}  // namespace collage::io
