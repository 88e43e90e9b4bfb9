// Encoding of an OpenVINO region's header: "CLOV", format version, threads, flags, build number,
// little-endian.
#include "ov_record.h"

#include <cstring>

namespace collage::rt_openvino {
namespace {

constexpr char kMagic[4] = {'C', 'L', 'O', 'V'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kHasBlob = 1;
constexpr uint32_t kMaxBuildNumber = 4096;

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint32_t u32(const char* what) {
    need(4, what);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p_[at_ + i]) << (8 * i);
    at_ += 4;
    return v;
  }
  std::string bytes(size_t n, const char* what) {
    need(n, what);
    std::string s(reinterpret_cast<const char*>(p_ + at_), n);
    at_ += n;
    return s;
  }
  size_t left() const { return n_ - at_; }

 private:
  void need(size_t n, const char* what) {
    if (n > n_ - at_)
      throw RecordError(std::string("openvino record parameters end inside the ") + what);
  }
  const uint8_t* p_;
  size_t n_;
  size_t at_ = 0;
};

}  // namespace

std::vector<uint8_t> encode_header(const RecordHeader& header) {
  std::vector<uint8_t> out(kMagic, kMagic + 4);
  put_u32(out, kFormatVersion);
  put_u32(out, static_cast<uint32_t>(header.num_threads));
  put_u32(out, header.has_blob ? kHasBlob : 0);
  put_u32(out, static_cast<uint32_t>(header.built_with.size()));
  out.insert(out.end(), header.built_with.begin(), header.built_with.end());
  return out;
}

RecordHeader decode_header(const uint8_t* params, size_t size) {
  if (!params && size) throw RecordError("openvino record: parameters are missing");
  Reader r(params, size);
  if (r.bytes(4, "magic") != std::string(kMagic, 4))
    throw RecordError("openvino record: parameters do not start with \"CLOV\"");
  if (const uint32_t v = r.u32("format version"); v != kFormatVersion)
    throw RecordError("openvino record format version " + std::to_string(v) +
                      "; this module reads version " + std::to_string(kFormatVersion));
  RecordHeader h;
  const uint32_t threads = r.u32("thread count");
  if (threads < 1 || threads > 4096)
    throw RecordError("openvino record: thread count " + std::to_string(threads));
  h.num_threads = static_cast<int32_t>(threads);
  const uint32_t flags = r.u32("flags");
  if (flags & ~kHasBlob) throw RecordError("openvino record: unknown flags");
  h.has_blob = (flags & kHasBlob) != 0;
  const uint32_t len = r.u32("build number length");
  if (len > kMaxBuildNumber) throw RecordError("openvino record: build number too long");
  h.built_with = r.bytes(len, "build number");
  if (r.left()) throw RecordError("openvino record: trailing bytes after the header");
  return h;
}

}  // namespace collage::rt_openvino
