// Helpers for the array-file tests: scratch folders, raw file access and deterministic tensors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "collage/tensor.h"

namespace collage::testing {

// A fresh folder under the system temporary folder, removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // Names of the entries in the folder, sorted.
  std::vector<std::string> entries() const;

 private:
  std::filesystem::path path_;
};

void write_bytes(const std::filesystem::path& path, std::span<const uint8_t> bytes);
void write_bytes(const std::filesystem::path& path, const std::string& bytes);
std::vector<uint8_t> read_bytes(const std::filesystem::path& path);
// A byte array (e.g. a fixture) as a string.
std::string as_string(std::span<const unsigned char> bytes);

// A tensor whose elements differ from each other and from other seeds, for every dtype (bools
// alternate in a seed-dependent pattern).
Tensor pattern_tensor(DType dtype, const Shape& shape, int seed);

// The element types .npy files can hold.
inline constexpr DType kNpyDTypes[] = {DType::f32, DType::f16, DType::i8,  DType::i32,
                                       DType::i64, DType::boolean, DType::f64, DType::i16,
                                       DType::u8,  DType::u16, DType::u32, DType::u64,
                                       DType::str};

}  // namespace collage::testing
