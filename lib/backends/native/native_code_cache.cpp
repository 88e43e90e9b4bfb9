// The compiled-code cache: keys, and objects read and written whole.
#include "backends/native/native_code_cache.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_format.h"
#include "collage/jit.h"
#include "collage/subgraph.h"
#include "core/str_cat.h"
#include "io/file_io.h"

namespace collage::native {
namespace {

std::filesystem::path path_of(const std::string& dir, uint64_t key) {
  return std::filesystem::path(dir) / absl::StrFormat("%016x.o", key);
}

}  // namespace

uint64_t code_key(const std::vector<te::PrimFunc>& funcs, const codegen::TargetSpec& target,
                  std::string_view version) {
  std::string text = str_cat(version, "|", target.to_string(), "|", target.features, "|llvm ",
                             codegen::llvm_version());
  for (const te::PrimFunc& f : funcs) text += "\n" + te::to_string(f);
  return stable_hash(text);
}

std::optional<std::string> read_cached_code(const std::string& dir, uint64_t key) {
  std::ifstream in(path_of(dir, key), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in && !in.eof()) return std::nullopt;
  std::string object = bytes.str();
  if (object.empty()) return std::nullopt;
  return object;
}

absl::Status write_cached_code(const std::string& dir, uint64_t key, const std::string& object) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(str_cat(dir, ": cannot create the code cache: ", ec.message()));
  auto writer = io::AtomicFileWriter::create(path_of(dir, key));
  if (!writer.ok()) return writer.status();
  if (absl::Status s = (*writer)->write(std::string_view(object)); !s.ok()) return s;
  return (*writer)->commit();
}

}  // namespace collage::native
