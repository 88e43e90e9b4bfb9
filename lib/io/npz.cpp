// The public .npy / .npz API: files mapped and decoded, archives written atomically.
#include "collage/npz.h"

#include <set>

#include "core/str_cat.h"
#include "io/file_io.h"
#include "io/npy_format.h"
#include "io/npy_strings.h"
#include "io/zip_reader.h"
#include "io/zip_writer.h"

namespace collage {
namespace {

constexpr std::string_view kNpySuffix = ".npy";

// The same status with "<context>: " in front of its message.
absl::Status with_context(const absl::Status& s, std::string_view context) {
  return absl::Status(s.code(), str_cat(context, ": ", s.message()));
}

std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The .npy header and array data of a tensor; a str tensor's data is converted (to UTF-32).
struct EncodedArray {
  std::string header;
  std::string strings;
  std::span<const uint8_t> data(const Tensor& t) const {
    if (t.dtype() == DType::str) return as_bytes(strings);
    return {static_cast<const uint8_t*>(t.raw()), t.bytes()};
  }
};

absl::StatusOr<EncodedArray> encode(const Tensor& t) {
  EncodedArray e;
  absl::StatusOr<std::string> header;
  if (t.dtype() == DType::str && !t.empty()) {
    auto s = io::encode_npy_strings(t);
    if (!s.ok()) return s.status();
    header = io::encode_npy_header(s->descr, t.shape());
    e.strings = std::move(s->data);
  } else {
    header = io::encode_npy_header(t);
  }
  if (!header.ok()) return header.status();
  e.header = *std::move(header);
  return e;
}

}  // namespace

absl::StatusOr<Tensor> read_npy(const std::filesystem::path& path) {
  auto file = io::MappedFile::open(path);
  if (!file.ok()) return file.status();
  auto t = io::decode_npy((*file)->bytes());
  if (!t.ok()) return with_context(t.status(), path.string());
  return t;
}

absl::Status write_npy(const std::filesystem::path& path, const Tensor& t) {
  auto encoded = encode(t);
  if (!encoded.ok()) return with_context(encoded.status(), path.string());
  auto out = io::AtomicFileWriter::create(path);
  if (!out.ok()) return out.status();
  if (absl::Status s = (*out)->write(encoded->header); !s.ok()) return s;
  if (absl::Status s = (*out)->write(encoded->data(t)); !s.ok()) return s;
  return (*out)->commit();
}

absl::StatusOr<NamedTensors> read_npz(const std::filesystem::path& path) {
  auto file = io::MappedFile::open(path);
  if (!file.ok()) return file.status();
  const std::span<const uint8_t> archive = (*file)->bytes();
  auto members = io::list_zip_members(archive);
  if (!members.ok()) return with_context(members.status(), path.string());
  NamedTensors arrays;
  arrays.reserve(members->size());
  for (const io::ZipMember& m : *members) {
    const std::string context = str_cat(path.string(), ": member '", m.name, "'");
    if (!m.name.ends_with(kNpySuffix))
      return absl::InvalidArgumentError(str_cat(context, ": not an .npy array"));
    auto bytes = io::read_zip_member(archive, m);
    if (!bytes.ok()) return with_context(bytes.status(), path.string());
    auto t = io::decode_npy(bytes->bytes, std::move(bytes->owner));
    if (!t.ok()) return with_context(t.status(), context);
    arrays.emplace_back(m.name.substr(0, m.name.size() - kNpySuffix.size()), *std::move(t));
  }
  return arrays;
}

absl::Status write_npz(const std::filesystem::path& path, const NamedTensors& arrays) {
  std::vector<EncodedArray> encoded;
  std::set<std::string_view> names;
  for (const auto& [name, t] : arrays) {
    const std::string context = str_cat(path.string(), ": array '", name, "'");
    if (name.empty()) return absl::InvalidArgumentError(str_cat(context, ": empty name"));
    if (!names.insert(name).second)
      return absl::InvalidArgumentError(str_cat(context, ": name given twice"));
    auto e = encode(t);
    if (!e.ok()) return with_context(e.status(), context);
    encoded.push_back(*std::move(e));
  }
  auto out = io::AtomicFileWriter::create(path);
  if (!out.ok()) return out.status();
  io::ZipWriter zip(**out);
  for (size_t i = 0; i < arrays.size(); ++i) {
    const std::span<const uint8_t> pieces[] = {as_bytes(encoded[i].header),
                                               encoded[i].data(arrays[i].second)};
    if (absl::Status s = zip.add_stored(str_cat(arrays[i].first, kNpySuffix), pieces); !s.ok())
      return with_context(s, path.string());
  }
  if (absl::Status s = zip.finish(); !s.ok()) return s;
  return (*out)->commit();
}

}  // namespace collage
