// The little-endian writing and bounds-checked reading of a module's kernel parameters: integers
// (u8, u32, u64, i64) and IEEE-754 binary32 floats in a little-endian u32. A reader fails once, at
// the first read past the end or the first fail(), and keeps that error ("<prefix>: <what> at byte
// N"); later reads return zeros. Header-only, so that each module's shared library stays
// self-contained; each module adds its own fields (enums, lists) on top.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace collage::rt_common {

class ParamWriter {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i64(int64_t v) { le(static_cast<uint64_t>(v), 8); }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u32(bits);
  }
  std::vector<uint8_t> take() { return std::move(out_); }

 protected:
  std::vector<uint8_t> out_;

 private:
  void le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
};

class ParamReader {
 public:
  // `prefix` starts every error ("parameters", "gpu program").
  ParamReader(const uint8_t* data, size_t size, std::string prefix)
      : data_(data), size_(size), prefix_(std::move(prefix)) {}

  const std::string& error() const { return error_; }
  bool at_end() const { return pos_ == size_; }
  size_t position() const { return pos_; }
  size_t left() const { return size_ - pos_; }

  void fail(const std::string& message) {
    if (error_.empty()) error_ = prefix_ + ": " + message + " at byte " + std::to_string(pos_);
  }
  // The next `n` bytes, or null (failing) when fewer are left or the reader has failed.
  const uint8_t* take(size_t n) {
    if (!error_.empty()) return nullptr;
    if (left() < n) {
      fail("truncated (" + std::to_string(size_) + " bytes)");
      return nullptr;
    }
    const uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  int64_t i64() { return static_cast<int64_t>(le(8)); }
  float f32() {
    const uint32_t bits = u32();
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }

 private:
  uint64_t le(size_t n) {
    const uint8_t* p = take(n);
    uint64_t v = 0;
    for (size_t i = 0; p && i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string prefix_;
  std::string error_;
};

}  // namespace collage::rt_common
