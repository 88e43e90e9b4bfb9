// Implementation of the array-file test helpers.
#include "io/io_test_util.h"

#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace collage::testing {

ScratchDir::ScratchDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "collage-io-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> ScratchDir::entries() const {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(path_))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void write_bytes(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  write_bytes(path, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string as_string(std::span<const unsigned char> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

Tensor pattern_tensor(DType dtype, const Shape& shape, int seed) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = (i * 7 + seed * 13) % 101 - 50;
    switch (dtype) {
      case DType::f32:
        t.data<float>()[i] = static_cast<float>(v) * 0.25f;
        break;
      case DType::f16:
        t.data<uint16_t>()[i] = float_to_half(static_cast<float>(v) * 0.5f);
        break;
      case DType::bf16:
        t.data<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(v) * 0.5f);
        break;
      case DType::i8:
        t.data<int8_t>()[i] = static_cast<int8_t>(v);
        break;
      case DType::i32:
        t.data<int32_t>()[i] = static_cast<int32_t>(v * 1000003);
        break;
      case DType::i64:
        t.data<int64_t>()[i] = v * 1000000000007LL;
        break;
      case DType::boolean:
        t.data<uint8_t>()[i] = (i + seed) % 3 == 0;
        break;
      case DType::f64:
        t.data<double>()[i] = static_cast<double>(v) * 0.125;
        break;
      case DType::i16:
        t.data<int16_t>()[i] = static_cast<int16_t>(v * 601);
        break;
      case DType::u8:
        t.data<uint8_t>()[i] = static_cast<uint8_t>(v + 50);
        break;
      case DType::u16:
        t.data<uint16_t>()[i] = static_cast<uint16_t>((v + 50) * 601);
        break;
      case DType::u32:
        t.data<uint32_t>()[i] = static_cast<uint32_t>((v + 50) * 1000003);
        break;
      case DType::u64:
        t.data<uint64_t>()[i] = static_cast<uint64_t>(v + 50) * 1000000000007ULL;
        break;
      case DType::str:
        t.data<std::string>()[i] = std::to_string(v);
        break;
    }
  }
  return t;
}

}  // namespace collage::testing
