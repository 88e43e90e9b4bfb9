// The bytes of a loaded artifact: a read-only memory map of a file, an aligned private copy of a
// caller's buffer, or the caller's buffer itself (borrowed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "status.h"

namespace collage::rt {

class Blob {
 public:
  // Maps `path` read-only. Errors: Code::not_found (no such file), Code::io (anything else).
  static Status map_file(const std::string& path, std::unique_ptr<Blob>* out);
  // Copies `size` bytes into a 64-byte aligned buffer the blob owns.
  static Status copy(const void* data, size_t size, std::unique_ptr<Blob>* out);
  // Uses the caller's bytes in place; they must stay valid and unchanged while the blob lives.
  static std::unique_ptr<Blob> borrow(const void* data, size_t size);
  ~Blob();
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  enum class Kind { mapped, owned, borrowed };
  Blob(Kind kind, const uint8_t* data, size_t size) : kind_(kind), data_(data), size_(size) {}
  Kind kind_;
  const uint8_t* data_;
  size_t size_;
};

}  // namespace collage::rt
