// The region cache: keys, and records stored as one file whose constants are mapped on reading.
//
// File: 16-byte magic, the key, the module and entry lengths, the params length, the number of
// constants; the module, entry and params; then per constant its byte count, and the constants'
// bytes, each at a 64-byte aligned offset (so the mapped tensors are aligned as any tensor is).
#include "backends/openvino/region_cache.h"

#include <cstring>
#include <filesystem>
#include <memory>
#include <span>

#include "absl/strings/str_format.h"
#include "collage/subgraph.h"
#include "core/str_cat.h"
#include "io/file_io.h"
#include "io/le_bytes.h"
#include "llvm/Support/xxhash.h"

namespace collage::openvino_backend {
namespace {

constexpr char kMagic[16] = "collage-ov-rec1";
constexpr size_t kAlign = 64;
constexpr uint32_t kMaxConstants = 16;

std::filesystem::path path_of(const std::string& dir, uint64_t key) {
  return std::filesystem::path(dir) / absl::StrFormat("ov-%016x.rec", key);
}

size_t align_up(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

uint64_t hash_bytes(const void* data, size_t size) {
  return llvm::xxHash64(llvm::ArrayRef<uint8_t>(static_cast<const uint8_t*>(data), size));
}

// Reads the file's fields in order, each checked against its end.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool u64(uint64_t& v) {
    if (bytes_.size() - at_ < 8) return false;
    v = io::load64(bytes_.data() + at_);
    at_ += 8;
    return true;
  }
  bool text(uint64_t n, std::string& out) {
    if (bytes_.size() - at_ < n) return false;
    out.assign(reinterpret_cast<const char*>(bytes_.data() + at_), n);
    at_ += n;
    return true;
  }
  size_t at() const { return at_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

}  // namespace

uint64_t region_key(const Graph& group, int32_t threads, std::string_view library,
                    std::string_view version) {
  std::string text = str_cat(version, "|", library, "|threads ", threads, "|",
                             canonical_signature(group));
  for (const Tensor& c : group.constants()) {
    if (c.dtype() != DType::str) {
      text += str_cat("|", c.bytes(), ":", hash_bytes(c.raw(), c.bytes()));
      continue;
    }
    // A str constant's buffer holds std::string objects: their contents are what counts.
    for (int64_t i = 0; i < c.numel(); ++i) {
      const std::string& v = c.data<std::string>()[i];
      text += str_cat("|s", v.size(), ":", hash_bytes(v.data(), v.size()));
    }
  }
  return hash_bytes(text.data(), text.size());
}

std::optional<KernelRecord> read_cached_region(const std::string& dir, uint64_t key) {
  auto file = io::MappedFile::open(path_of(dir, key));
  if (!file.ok()) return std::nullopt;
  const std::span<const uint8_t> bytes = (*file)->bytes();
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  Reader r(bytes.subspan(sizeof kMagic));
  uint64_t stored_key, module_size, entry_size, params_size, count;
  if (!r.u64(stored_key) || stored_key != key || !r.u64(module_size) || !r.u64(entry_size) ||
      !r.u64(params_size) || !r.u64(count) || count > kMaxConstants)
    return std::nullopt;
  KernelRecord record;
  std::string params;
  if (!r.text(module_size, record.module) || !r.text(entry_size, record.entry) ||
      !r.text(params_size, params))
    return std::nullopt;
  record.params.assign(params.begin(), params.end());
  std::vector<uint64_t> sizes(count);
  for (uint64_t& n : sizes)
    if (!r.u64(n)) return std::nullopt;
  size_t at = align_up(sizeof kMagic + r.at());
  for (uint64_t n : sizes) {
    if (at > bytes.size() || bytes.size() - at < n) return std::nullopt;
    // The tensor keeps the mapping alive; it is only read.
    record.constants.push_back(Tensor::wrap(DType::i8, {static_cast<int64_t>(n)},
                                            const_cast<uint8_t*>(bytes.data() + at),
                                            std::const_pointer_cast<io::MappedFile>(*file)));
    at = align_up(at + n);
  }
  return record;
}

absl::Status write_cached_region(const std::string& dir, uint64_t key, const KernelRecord& record) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return absl::UnavailableError(str_cat(dir, ": cannot create the code cache: ", ec.message()));
  if (record.constants.size() > kMaxConstants)
    return absl::InvalidArgumentError(
        str_cat("openvino region cache: a record of ", record.constants.size(), " constants"));
  std::string head(kMagic, sizeof kMagic);
  io::store64(head, key);
  io::store64(head, record.module.size());
  io::store64(head, record.entry.size());
  io::store64(head, record.params.size());
  io::store64(head, record.constants.size());
  head += record.module;
  head += record.entry;
  head.append(record.params.begin(), record.params.end());
  for (const Tensor& c : record.constants) io::store64(head, c.bytes());
  auto writer = io::AtomicFileWriter::create(path_of(dir, key));
  if (!writer.ok()) return writer.status();
  io::AtomicFileWriter& w = **writer;
  const std::string zeros(kAlign, '\0');
  if (absl::Status s = w.write(head); !s.ok()) return s;
  for (const Tensor& c : record.constants) {
    const size_t pad = align_up(w.offset()) - w.offset();
    if (absl::Status s = w.write(std::string_view(zeros.data(), pad)); !s.ok()) return s;
    const std::string_view bytes(static_cast<const char*>(c.raw()), c.bytes());
    if (absl::Status s = w.write(bytes); !s.ok()) return s;
  }
  return w.commit();
}

}  // namespace collage::openvino_backend
