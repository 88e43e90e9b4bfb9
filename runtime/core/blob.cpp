// Blob: mmap of a file, or an aligned copy or borrowed view of a caller's buffer.
#include "blob.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace collage::rt {

Status Blob::map_file(const std::string& path, std::unique_ptr<Blob>* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return error(err == ENOENT ? Code::not_found : Code::io, "cannot open artifact '", path,
                 "': ", std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return error(Code::io, "artifact '", path, "' is not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return error(Code::corrupt, "artifact '", path, "' is empty");
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED)
    return error(Code::io, "cannot map artifact '", path, "': ", std::strerror(err));
  out->reset(new Blob(Kind::mapped, static_cast<const uint8_t*>(p), size));
  return Status();
}

Status Blob::copy(const void* data, size_t size, std::unique_ptr<Blob>* out) {
  void* p = std::aligned_alloc(64, (size + 63) / 64 * 64 + 64);
  if (!p) return error(Code::internal, "out of memory copying a ", size, "-byte artifact");
  if (size) std::memcpy(p, data, size);
  out->reset(new Blob(Kind::owned, static_cast<const uint8_t*>(p), size));
  return Status();
}

std::unique_ptr<Blob> Blob::borrow(const void* data, size_t size) {
  return std::unique_ptr<Blob>(new Blob(Kind::borrowed, static_cast<const uint8_t*>(data), size));
}

Blob::~Blob() {
  switch (kind_) {
    case Kind::mapped:
      ::munmap(const_cast<uint8_t*>(data_), size_);
      break;
    case Kind::owned:
      std::free(const_cast<uint8_t*>(data_));
      break;
    case Kind::borrowed:
      break;
  }
}

}  // namespace collage::rt
