// Reading and writing NumPy .npy and .npz files (as np.save / np.savez / np.savez_compressed
// write them).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/tensor.h"

namespace collage {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Reads one .npy file. Supports little-endian float32, float16, int8, int32, int64, bool, and
// C-order arrays (Fortran order is refused). Errors name the file and what is wrong.
absl::StatusOr<Tensor> read_npy(const std::filesystem::path& path);
absl::Status write_npy(const std::filesystem::path& path, const Tensor& t);

// Reads every array of an .npz archive, in archive order (names without ".npy"). Stored and
// deflate-compressed members are supported.
absl::StatusOr<NamedTensors> read_npz(const std::filesystem::path& path);
// Writes an uncompressed .npz archive, readable by np.load. The file is written to a temporary
// name and renamed, so a failure never leaves a partial file.
absl::Status write_npz(const std::filesystem::path& path, const NamedTensors& arrays);

}  // namespace collage
