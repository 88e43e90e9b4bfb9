// How str values are laid out in an artifact (docs/artifact-format.md, format version 3): a
// tensor of the plan holds collage_string_t elements (a pointer and a length, 16 bytes), and a
// string constant is stored as a string table.
#pragma once

#include <cstdint>
#include <string>

#include "collage/tensor.h"

namespace collage::artifact {

// Bytes of a value of type `t` in a run (arena, caller buffers): str elements are
// collage_string_t. 0 for a type with a dynamic dimension.
uint64_t run_bytes(const TensorType& t);

// The string table of a str tensor: numel + 1 little-endian u64 offsets into the bytes that
// follow (0 first, the bytes' size last), then the strings' bytes.
std::string encode_string_table(const Tensor& t);

}  // namespace collage::artifact
