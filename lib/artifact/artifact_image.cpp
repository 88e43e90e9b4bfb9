// ArtifactImage: an artifact's file put together in memory, or streamed to disk from its pieces.
#include "artifact/artifact.h"
#include "artifact/artifact_file.h"
#include "io/file_io.h"

namespace collage {

uint64_t ArtifactImage::size() const {
  return layout->size();
}

std::string ArtifactImage::bytes() const {
  return layout->bytes();
}

absl::Status ArtifactImage::write_file(const std::filesystem::path& path) const {
  auto writer = io::AtomicFileWriter::create(path);
  if (!writer.ok()) return writer.status();
  if (absl::Status s = layout->write([&](std::string_view b) { return (*writer)->write(b); });
      !s.ok())
    return s;
  return (*writer)->commit();
}

}  // namespace collage
