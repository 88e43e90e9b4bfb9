// Encoding and decoding of the strings module's parameters (str_params.h).
#include "str_params.h"

#include <cstring>
#include <iterator>

namespace collage::rt_strings {
namespace {

constexpr char kMagic[4] = {'S', 'T', 'R', 'P'};
constexpr uint32_t kVersion = 1;
constexpr std::string_view kNames[] = {"LabelEncoder", "StringNormalizer", "StringConcat",
                                       "StringEqual",  "StringSplit",      "RegexFullMatch",
                                       "CastString"};
static_assert(std::size(kNames) == static_cast<size_t>(StrOp::count_));

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool u32(uint32_t* v) {
    if (size_ - at_ < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= static_cast<uint32_t>(data_[at_ + i]) << (8 * i);
    at_ += 4;
    return true;
  }
  bool i64(int64_t* v) {
    uint32_t lo = 0, hi = 0;
    if (!u32(&lo) || !u32(&hi)) return false;
    *v = static_cast<int64_t>(static_cast<uint64_t>(hi) << 32 | lo);
    return true;
  }
  bool bytes(size_t n, std::string* s) {
    if (size_ - at_ < n) return false;
    s->assign(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return true;
  }
  size_t left() const { return size_ - at_; }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

}  // namespace

StrOp str_op_of(std::string_view op_name) {
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (kNames[i] == op_name) return static_cast<StrOp>(i);
  return StrOp::count_;
}

std::string_view str_op_name(StrOp op) {
  return op < StrOp::count_ ? kNames[static_cast<size_t>(op)] : "unknown";
}

std::vector<uint8_t> encode_params(const StrParams& p) {
  std::vector<uint8_t> out(kMagic, kMagic + 4);
  put_u32(out, kVersion);
  put_u32(out, static_cast<uint32_t>(p.op));
  for (const std::vector<int64_t>* list : {&p.sources, &p.ints}) {
    put_u32(out, static_cast<uint32_t>(list->size()));
    for (int64_t v : *list) {
      put_u32(out, static_cast<uint32_t>(static_cast<uint64_t>(v)));
      put_u32(out, static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
    }
  }
  put_u32(out, static_cast<uint32_t>(p.strings.size()));
  for (const std::string& s : p.strings) {
    put_u32(out, static_cast<uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

std::string decode_params(const uint8_t* data, size_t size, StrParams* p) {
  if (size < 4 || !data || std::memcmp(data, kMagic, 4) != 0)
    return "parameters do not start with STRP";
  Reader r(data + 4, size - 4);
  uint32_t version = 0, op = 0, n = 0;
  if (!r.u32(&version)) return "parameters truncated";
  if (version != kVersion)
    return "parameters of version " + std::to_string(version) + "; this module reads version 1";
  if (!r.u32(&op) || op >= static_cast<uint32_t>(StrOp::count_))
    return "parameters name no operator of the strings module";
  p->op = static_cast<StrOp>(op);
  for (std::vector<int64_t>* list : {&p->sources, &p->ints}) {
    if (!r.u32(&n) || n > r.left() / 8) return "parameters truncated in the integers";
    list->resize(n);
    for (int64_t& v : *list)
      if (!r.i64(&v)) return "parameters truncated in the integers";
  }
  if (!r.u32(&n) || n > r.left() / 4) return "parameters truncated in the strings";
  p->strings.resize(n);
  for (std::string& s : p->strings) {
    uint32_t len = 0;
    if (!r.u32(&len) || !r.bytes(len, &s)) return "parameters truncated in the strings";
  }
  if (r.left()) return std::to_string(r.left()) + " bytes after the parameters";
  return "";
}

}  // namespace collage::rt_strings
