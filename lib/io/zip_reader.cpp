// ZIP central-directory parsing (with zip64) and member extraction (stored and deflate via zlib).
#include "io/zip_reader.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>

#include "core/str_cat.h"
#include "io/le_bytes.h"
#include "io/zip_format.h"

namespace collage::io {
namespace {

using namespace zip;

// Deflate cannot compress better than about 1032:1; a larger claimed ratio means a corrupt
// header, and refusing it keeps a few corrupt bytes from requesting a huge allocation.
constexpr uint64_t kMaxDeflateRatio = 1032;

absl::Status bad(std::string_view what) {
  return absl::InvalidArgumentError(str_cat("invalid zip archive: ", what));
}

absl::Status bad_member(std::string_view name, std::string_view what) {
  return absl::InvalidArgumentError(str_cat("member '", name, "': ", what));
}

// True when [offset, offset + size) lies within [0, limit).
bool in_range(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

struct Directory {
  uint64_t entries = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t end = 0;  // where the end records start; the directory must end before it
};

absl::StatusOr<Directory> find_directory(std::span<const uint8_t> a) {
  if (a.size() < kEndSize) return bad(str_cat("only ", a.size(), " bytes, too short"));
  // The end record is the last 22 bytes unless the archive has a comment (at most 64 KiB).
  const size_t lowest = a.size() - kEndSize > kMax16 ? a.size() - kEndSize - kMax16 : 0;
  size_t pos = a.size() - kEndSize + 1;
  bool found = false;
  while (pos-- > lowest) {
    if (load32(&a[pos]) == kEndSig && pos + kEndSize + load16(&a[pos + 20]) <= a.size()) {
      found = true;
      break;
    }
  }
  if (!found) return bad("no end-of-central-directory record (not a zip file, or truncated)");
  const uint8_t* e = &a[pos];
  if (load16(e + 4) != 0 || load16(e + 6) != 0 || load16(e + 8) != load16(e + 10))
    return bad("multi-disk archives are not supported");
  Directory d{load16(e + 10), load32(e + 16), load32(e + 12), pos};

  if (pos >= kZip64LocatorSize && load32(&a[pos - kZip64LocatorSize]) == kZip64LocatorSig) {
    const uint8_t* loc = &a[pos - kZip64LocatorSize];
    const uint64_t z = load64(loc + 8);
    if (!in_range(z, kZip64EndSize, pos - kZip64LocatorSize) || load32(&a[z]) != kZip64EndSig)
      return bad("zip64 locator points to no zip64 end record");
    const uint8_t* ze = &a[z];
    if (load32(ze + 16) != 0 || load32(ze + 20) != 0 || load64(ze + 24) != load64(ze + 32))
      return bad("multi-disk archives are not supported");
    d = Directory{load64(ze + 32), load64(ze + 48), load64(ze + 40), z};
  } else if (d.entries == kMax16 || d.offset == kMax32 || d.size == kMax32) {
    return bad("end record refers to a zip64 end record that is missing");
  }
  if (!in_range(d.offset, d.size, d.end))
    return bad(str_cat("central directory (offset ", d.offset, ", ", d.size,
                       " bytes) lies outside the archive"));
  if (d.entries > d.size / kCentralHeaderSize)
    return bad(
        str_cat(d.entries, " entries cannot fit in a central directory of ", d.size, " bytes"));
  return d;
}

// Replaces the 32-bit fields that hold 0xFFFFFFFF with the values of the zip64 extra field.
absl::Status apply_zip64_extra(std::span<const uint8_t> extra, ZipMember& m, uint64_t& offset,
                               bool need_size, bool need_csize, bool need_offset) {
  size_t p = 0;
  while (p + 4 <= extra.size()) {
    const uint16_t id = load16(&extra[p]), len = load16(&extra[p + 2]);
    if (len > extra.size() - p - 4) return bad_member(m.name, "extra field runs past its end");
    if (id == kZip64ExtraId) {
      const size_t needed = 8 * (need_size + need_csize + need_offset);
      if (len < needed) return bad_member(m.name, "zip64 extra field too short");
      const uint8_t* f = &extra[p + 4];
      if (need_size) m.uncompressed_size = load64(f), f += 8;
      if (need_csize) m.compressed_size = load64(f), f += 8;
      if (need_offset) offset = load64(f);
      return absl::OkStatus();
    }
    p += 4 + len;
  }
  if (need_size || need_csize || need_offset)
    return bad_member(m.name, "sizes need a zip64 extra field that is missing");
  return absl::OkStatus();
}

absl::Status inflate_into(std::span<const uint8_t> in, uint8_t* out, uint64_t out_size,
                          std::string_view name) {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return absl::InternalError("zlib inflateInit2 failed");
  size_t in_left = in.size();
  uint64_t out_left = out_size;
  z.next_in = const_cast<Bytef*>(in.data());
  z.next_out = out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    // zlib counts in 32-bit units; feed larger buffers in pieces.
    if (z.avail_in == 0) {
      z.avail_in = static_cast<uInt>(std::min<size_t>(in_left, UINT_MAX));
      in_left -= z.avail_in;
    }
    if (z.avail_out == 0) {
      z.avail_out = static_cast<uInt>(std::min<uint64_t>(out_left, UINT_MAX));
      out_left -= z.avail_out;
    }
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR) {
      // No progress with the current pieces: go on only if a buffer can be refilled.
      const bool refill = (z.avail_in == 0 && in_left > 0) || (z.avail_out == 0 && out_left > 0);
      if (!refill) break;
      rc = Z_OK;
    }
  }
  const std::string zmsg = z.msg ? z.msg : "";
  const uint64_t produced = z.total_out;
  const bool input_left = z.avail_in != 0 || in_left != 0;
  inflateEnd(&z);
  if (rc == Z_STREAM_END) {
    if (produced != out_size)
      return bad_member(name, str_cat("decompressed to ", produced, " bytes, expected ", out_size));
    if (input_left) return bad_member(name, "data after the end of the deflate stream");
    return absl::OkStatus();
  }
  if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
    return bad_member(name, str_cat("corrupt deflate data (", zmsg, ")"));
  if (rc == Z_MEM_ERROR) return absl::ResourceExhaustedError("zlib ran out of memory");
  if (out_left == 0 && z.avail_out == 0 && !input_left)
    return bad_member(name, "truncated deflate stream");
  if (out_left == 0 && z.avail_out == 0)
    return bad_member(name, str_cat("decompresses to more than the declared ", out_size, " bytes"));
  return bad_member(name, "truncated deflate stream");
}

}  // namespace

absl::StatusOr<std::vector<ZipMember>> list_zip_members(std::span<const uint8_t> a) {
  auto dir = find_directory(a);
  if (!dir.ok()) return dir.status();
  std::vector<ZipMember> members;
  members.reserve(dir->entries);
  std::set<std::string, std::less<>> names;
  uint64_t p = dir->offset;
  const uint64_t dir_end = dir->offset + dir->size;
  for (uint64_t i = 0; i < dir->entries; ++i) {
    if (!in_range(p, kCentralHeaderSize, dir_end) || load32(&a[p]) != kCentralHeaderSig)
      return bad(str_cat("central directory entry ", i, " is malformed"));
    const uint8_t* h = &a[p];
    const uint16_t flags = load16(h + 8), name_len = load16(h + 28), extra_len = load16(h + 30),
                   comment_len = load16(h + 32);
    if (!in_range(p + kCentralHeaderSize, uint64_t{name_len} + extra_len + comment_len, dir_end))
      return bad(str_cat("central directory entry ", i, " runs past the directory"));
    ZipMember m;
    m.name.assign(reinterpret_cast<const char*>(h + kCentralHeaderSize), name_len);
    m.method = load16(h + 10);
    m.crc32 = load32(h + 16);
    m.compressed_size = load32(h + 20);
    m.uncompressed_size = load32(h + 24);
    uint64_t local = load32(h + 42);
    const std::span<const uint8_t> extra(h + kCentralHeaderSize + name_len, extra_len);
    if (absl::Status s = apply_zip64_extra(extra, m, local, m.uncompressed_size == kMax32,
                                           m.compressed_size == kMax32, local == kMax32);
        !s.ok())
      return s;
    p += kCentralHeaderSize + name_len + extra_len + comment_len;

    if (flags & kFlagEncrypted) return bad_member(m.name, "encrypted members are not supported");
    if (m.method != kMethodStored && m.method != kMethodDeflate)
      return bad_member(m.name, str_cat("compression method ", m.method,
                                        " is not supported (only stored and deflate)"));
    if (m.method == kMethodStored && m.compressed_size != m.uncompressed_size)
      return bad_member(m.name, "stored member with different compressed and uncompressed sizes");
    if (!names.insert(m.name).second) return bad_member(m.name, "appears twice in the archive");

    // The local header repeats the name and has its own extra field; the data follows it.
    if (!in_range(local, kLocalHeaderSize, dir->offset) || load32(&a[local]) != kLocalHeaderSig)
      return bad_member(m.name, str_cat("no local header at offset ", local));
    const uint8_t* lh = &a[local];
    const uint64_t lname = load16(lh + 26), lextra = load16(lh + 28);
    m.data_offset = local + kLocalHeaderSize + lname + lextra;
    if (!in_range(local + kLocalHeaderSize, lname, dir->offset) ||
        std::string_view(reinterpret_cast<const char*>(lh + kLocalHeaderSize), lname) != m.name)
      return bad_member(m.name, "local header names a different member");
    if (!in_range(m.data_offset, m.compressed_size, dir->offset))
      return bad_member(m.name, str_cat(m.compressed_size, " bytes at offset ", m.data_offset,
                                        " run past the end of the member data"));
    members.push_back(std::move(m));
  }
  if (p != dir_end)
    return bad(str_cat("central directory has ", dir_end - p, " bytes after its ", dir->entries,
                       " entries"));
  return members;
}

absl::StatusOr<ZipMemberBytes> read_zip_member(std::span<const uint8_t> a, const ZipMember& m) {
  const std::span<const uint8_t> data = a.subspan(m.data_offset, m.compressed_size);
  ZipMemberBytes out;
  if (m.method == kMethodStored) {
    out.bytes = data;
  } else {
    if (m.uncompressed_size > m.compressed_size * kMaxDeflateRatio + 1024)
      return bad_member(m.name,
                        str_cat("claims ", m.uncompressed_size, " bytes from ", m.compressed_size,
                                " compressed bytes, which deflate cannot produce"));
    const size_t alloc = (m.uncompressed_size + 63) / 64 * 64 + 64;
    void* buf = std::aligned_alloc(64, alloc);
    if (!buf)
      return absl::ResourceExhaustedError(
          str_cat("member '", m.name, "': cannot allocate ", m.uncompressed_size, " bytes"));
    out.owner = std::shared_ptr<void>(buf, [](void* q) { std::free(q); });
    if (absl::Status s =
            inflate_into(data, static_cast<uint8_t*>(buf), m.uncompressed_size, m.name);
        !s.ok())
      return s;
    out.bytes = {static_cast<const uint8_t*>(buf), m.uncompressed_size};
  }
  const uint32_t crc = static_cast<uint32_t>(crc32_z(0, out.bytes.data(), out.bytes.size()));
  if (crc != m.crc32)
    return bad_member(m.name, str_cat("CRC-32 mismatch (stored ", m.crc32, ", computed ", crc,
                                      "): the archive is corrupt"));
  return out;
}

}  // namespace collage::io
