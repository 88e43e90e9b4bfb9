// Little-endian integer fields: loading from and appending to byte buffers.
#pragma once

#include <cstdint>
#include <string>

namespace collage::io {

inline uint64_t load_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint16_t load16(const uint8_t* p) {
  return static_cast<uint16_t>(load_le(p, 2));
}
inline uint32_t load32(const uint8_t* p) {
  return static_cast<uint32_t>(load_le(p, 4));
}
inline uint64_t load64(const uint8_t* p) {
  return load_le(p, 8);
}

inline void store_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
inline void store16(std::string& out, uint64_t v) {
  store_le(out, v, 2);
}
inline void store32(std::string& out, uint64_t v) {
  store_le(out, v, 4);
}
inline void store64(std::string& out, uint64_t v) {
  store_le(out, v, 8);
}

}  // namespace collage::io
