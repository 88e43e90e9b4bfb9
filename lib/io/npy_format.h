// The NumPy .npy format in memory: decoding a whole .npy image and encoding its header.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "collage/tensor.h"

namespace collage::io {

// Decodes a complete .npy image (format versions 1.0, 2.0 and 3.0). Supported element types are
// little-endian float32, float16, int8, int32, int64 and bool in C order, and the fixed-width
// string dtypes U and S (as str tensors, npy_strings.h); anything else, a
// truncated image, or bytes after the array data is an InvalidArgument error whose message says
// what is wrong (the caller adds the file or member name). When `owner` keeps `bytes` alive and
// the array data is 64-byte aligned, the tensor shares `bytes` instead of copying them; `bytes`
// must then be writable memory that nobody else uses.
absl::StatusOr<Tensor> decode_npy(std::span<const uint8_t> bytes,
                                  std::shared_ptr<void> owner = nullptr);

// The header np.save writes for `t` (magic, version, length, dict, padding), byte for byte, so
// that the array data that follows starts at a multiple of 64 bytes. bf16 has no NumPy dtype and
// is refused with InvalidArgument, as is an empty (buffer-less) tensor.
absl::StatusOr<std::string> encode_npy_header(const Tensor& t);
// The same for an array of NumPy dtype `descr` ("<U5") and `shape` (str tensors: the descr of
// encode_npy_strings). A str tensor given to the overload above is an InvalidArgument error.
absl::StatusOr<std::string> encode_npy_header(std::string_view descr, const Shape& shape);

}  // namespace collage::io
