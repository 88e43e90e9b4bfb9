// Encoding of an OpenVINO region's header: "CLOV", format version, threads, flags, build number,
// weight pieces (count, then source, offset, size each), little-endian; and the weight pieces
// shared with the blob.
#include "ov_record.h"

#include <algorithm>
#include <cstring>

#include "blob_index.h"

namespace collage::rt_openvino {
namespace {

constexpr char kMagic[4] = {'C', 'L', 'O', 'V'};
constexpr uint32_t kFormatVersion = 2;
// Version 1 (artifacts written before the weights were shared with the blob): no weight pieces,
// the kWeights constant is all of the IR's weights.
constexpr uint32_t kWholeWeightsVersion = 1;
constexpr uint32_t kHasBlob = 1;
constexpr uint32_t kMaxBuildNumber = 4096;

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  put_u32(out, static_cast<uint32_t>(v));
  put_u32(out, static_cast<uint32_t>(v >> 32));
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
  uint64_t u64(const char* what) {
    const uint64_t low = u32(what);
    return low | static_cast<uint64_t>(u32(what)) << 32;
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
  put_u32(out, static_cast<uint32_t>(header.weights.size()));
  for (const WeightSegment& w : header.weights) {
    put_u32(out, static_cast<uint32_t>(w.source));
    put_u64(out, w.offset);
    put_u64(out, w.size);
  }
  return out;
}

RecordHeader decode_header(const uint8_t* params, size_t size) {
  if (!params && size) throw RecordError("openvino record: parameters are missing");
  Reader r(params, size);
  if (r.bytes(4, "magic") != std::string(kMagic, 4))
    throw RecordError("openvino record: parameters do not start with \"CLOV\"");
  const uint32_t version = r.u32("format version");
  if (version != kFormatVersion && version != kWholeWeightsVersion)
    throw RecordError("openvino record format version " + std::to_string(version) +
                      "; this module reads versions " + std::to_string(kWholeWeightsVersion) +
                      " and " + std::to_string(kFormatVersion));
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
  if (version == kWholeWeightsVersion) {
    h.whole_weights = true;
    if (r.left()) throw RecordError("openvino record: trailing bytes after the header");
    return h;
  }
  const uint32_t pieces = r.u32("weight piece count");
  if (pieces > r.left() / 20) throw RecordError("openvino record: weight piece count too large");
  for (uint32_t i = 0; i < pieces; ++i) {
    WeightSegment w;
    const uint32_t source = r.u32("weight pieces");
    if (source != kWeights && source != kBlob)
      throw RecordError("openvino record: weight piece " + std::to_string(i) + " of constant " +
                        std::to_string(source));
    w.source = static_cast<int32_t>(source);
    w.offset = r.u64("weight pieces");
    w.size = r.u64("weight pieces");
    h.weights.push_back(w);
  }
  if (r.left()) throw RecordError("openvino record: trailing bytes after the header");
  return h;
}

void check_weights(const RecordHeader& header, size_t residue_size, size_t blob_size) {
  if (header.whole_weights) return;
  for (size_t i = 0; i < header.weights.size(); ++i) {
    const WeightSegment& w = header.weights[i];
    const size_t limit = w.source == kBlob ? (header.has_blob ? blob_size : 0) : residue_size;
    if (w.offset > limit || w.size > limit - w.offset)
      throw RecordError("openvino record: weight piece " + std::to_string(i) + " (" +
                        std::to_string(w.size) + " bytes at " + std::to_string(w.offset) +
                        ") lies outside its constant of " + std::to_string(limit) + " bytes");
  }
}

bool weights_in_place(const RecordHeader& header, size_t residue_size) {
  if (header.whole_weights) return true;
  if (header.weights.empty()) return residue_size == 0;
  const WeightSegment& w = header.weights[0];
  return header.weights.size() == 1 && w.source == kWeights && w.offset == 0 &&
         w.size == residue_size;
}

std::vector<uint8_t> assemble_weights(const RecordHeader& header, const uint8_t* residue,
                                      size_t residue_size, const uint8_t* blob, size_t blob_size) {
  check_weights(header, residue_size, blob_size);
  if (header.whole_weights) return std::vector<uint8_t>(residue, residue + residue_size);
  uint64_t total = 0;
  for (const WeightSegment& w : header.weights) total += w.size;
  std::vector<uint8_t> out;
  out.reserve(total);
  for (const WeightSegment& w : header.weights) {
    const uint8_t* from = (w.source == kBlob ? blob : residue) + w.offset;
    out.insert(out.end(), from, from + w.size);
  }
  return out;
}

std::vector<WeightSegment> share_weights(std::string_view bin,
                                         const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                         std::string_view blob, size_t min_shared,
                                         std::string* residue) {
  std::vector<std::pair<uint64_t, uint64_t>> sorted = ranges;
  std::sort(sorted.begin(), sorted.end());
  std::vector<WeightSegment> out;
  const auto keep = [&](uint64_t from, uint64_t to) {  // bin[from, to) into the residue
    if (to <= from) return;
    if (!out.empty() && out.back().source == kWeights &&
        out.back().offset + out.back().size == residue->size())
      out.back().size += to - from;
    else
      out.push_back({kWeights, residue->size(), to - from});
    residue->append(bin.substr(from, to - from));
  };
  const BlobIndex index(blob, min_shared);
  uint64_t done = 0;    // bin bytes described so far
  size_t search = 0;    // where the next search of the blob starts: constants come in order
  for (const auto& [offset, size] : sorted) {
    if (offset < done || size < min_shared || offset > bin.size() || size > bin.size() - offset)
      continue;
    const std::string_view piece = bin.substr(offset, size);
    const size_t at = index.find(piece, search);
    if (at == std::string_view::npos) continue;
    keep(done, offset);
    out.push_back({kBlob, at, size});
    done = offset + size;
    search = at + size;
  }
  keep(done, bin.size());
  return out;
}

}  // namespace collage::rt_openvino
