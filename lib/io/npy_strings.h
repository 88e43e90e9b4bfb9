// NumPy string arrays (.npy dtypes U and S) as collage str tensors.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "collage/tensor.h"

namespace collage::io {

// The bytes of one element when `descr` (e.g. "<U5", "|S3", "|O") is a string dtype: 4 x length
// for U (UTF-32), length for S (bytes); nullopt when it is not a string dtype. Object arrays
// ("O": pickled Python objects) are an InvalidArgument error saying to save them as U or S.
absl::StatusOr<std::optional<size_t>> npy_string_element_size(std::string_view descr);

// The str tensor of `shape` whose elements are `data` in dtype `descr` (U: UTF-32, stored as
// UTF-8; S: bytes as they are); trailing NULs are padding, as in NumPy.
absl::StatusOr<Tensor> decode_npy_strings(std::string_view descr, const Shape& shape,
                                          std::span<const uint8_t> data);

// A str tensor as NumPy dtype "<U<n>" (n: the most code points of an element, at least 1):
// the descr and the array data. An element that is not UTF-8 is an InvalidArgument error.
struct NpyStrings {
  std::string descr;
  std::string data;
};
absl::StatusOr<NpyStrings> encode_npy_strings(const Tensor& t);

}  // namespace collage::io
