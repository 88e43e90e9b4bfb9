// Memory-mapped reading and atomic (temporary file + rename) writing of whole files.
#include "io/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/str_cat.h"

namespace collage::io {
namespace {

constexpr size_t kBufferSize = 1 << 16;

absl::Status errno_status(int err, std::string_view what, const std::filesystem::path& path) {
  return absl::ErrnoToStatus(err, str_cat(what, " '", path.string(), "'"));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const MappedFile>> MappedFile::open(
    const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, "cannot open", path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return errno_status(err, "cannot stat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(str_cat("'", path.string(), "' is not a regular file"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return errno_status(err, "cannot map", path);
    }
    data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(new MappedFile(data, size));
}

MappedFile::~MappedFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::create(
    const std::filesystem::path& path) {
  std::filesystem::path temp = path;
  temp += ".tmp-XXXXXX";
  std::string name = temp.string();
  int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return errno_status(errno, "cannot create a temporary file next to", path);
  // mkostemp creates the file 0600; give it the permissions an ordinary new file gets.
  fchmod(fd, 0644);
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, name, fd));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

absl::Status AtomicFileWriter::errno_error(std::string_view what, int err) const {
  return errno_status(err, what, path_);
}

absl::Status AtomicFileWriter::write_fd(const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno_error("cannot write", errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::flush() {
  absl::Status s = write_fd(reinterpret_cast<const uint8_t*>(buffer_.data()), buffer_.size());
  buffer_.clear();
  return s;
}

absl::Status AtomicFileWriter::write(std::span<const uint8_t> bytes) {
  if (fd_ < 0) return absl::FailedPreconditionError("write after commit");
  offset_ += bytes.size();
  if (buffer_.size() + bytes.size() <= kBufferSize) {
    buffer_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return absl::OkStatus();
  }
  if (absl::Status s = flush(); !s.ok()) return s;
  return write_fd(bytes.data(), bytes.size());
}

absl::Status AtomicFileWriter::commit() {
  if (fd_ < 0) return absl::FailedPreconditionError("commit called twice");
  if (absl::Status s = flush(); !s.ok()) return s;
  if (fsync(fd_) != 0) return errno_error("cannot flush", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 || ::rename(temp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(temp_.c_str());
    return errno_error("cannot write", err);
  }
  return absl::OkStatus();
}

}  // namespace collage::io
