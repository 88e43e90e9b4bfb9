// File helpers for the array formats: a read-only memory map of a whole file, and a writer that
// publishes its file atomically (temporary file + rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace collage::io {

// A whole regular file mapped read-only. Errors (missing file, a directory, an unreadable file)
// carry the errno-derived code and name the path.
class MappedFile {
 public:
  static absl::StatusOr<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  size_t size_;
};

// Writes a file under a temporary name in the destination folder and renames it over `path` in
// commit(), after flushing it to disk, so readers see either the old file or the complete new
// one. Destroying the writer without a successful commit() removes the temporary file.
class AtomicFileWriter {
 public:
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> create(
      const std::filesystem::path& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  absl::Status write(std::span<const uint8_t> bytes);
  absl::Status write(std::string_view bytes) {
    return write({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  }
  // Bytes written so far.
  uint64_t offset() const { return offset_; }
  absl::Status commit();

 private:
  AtomicFileWriter(std::filesystem::path path, std::filesystem::path temp, int fd)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(fd) {}
  absl::Status flush();
  absl::Status write_fd(const uint8_t* p, size_t n);
  absl::Status errno_error(std::string_view what, int err) const;

  std::filesystem::path path_, temp_;
  int fd_;
  std::string buffer_;
  uint64_t offset_ = 0;
};

}  // namespace collage::io
