// Little-endian writing and bounds-checked reading of the dynamic module's parameter bytes
// (dyn_params.cpp, dyn_body.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace collage::rt_dynamic {

inline void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline void put_i64(std::vector<uint8_t>& out, int64_t v) {
  const auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(u >> (8 * i)));
}

// Reads from a byte range; each read fails (false) rather than pass its end.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool u8(uint8_t* v) {
    if (n_ < 1) return false;
    *v = *p_++;
    --n_;
    return true;
  }
  bool u32(uint32_t* v) {
    if (n_ < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= static_cast<uint32_t>(p_[i]) << (8 * i);
    p_ += 4;
    n_ -= 4;
    return true;
  }
  bool i64(int64_t* v) {
    if (n_ < 8) return false;
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(p_[i]) << (8 * i);
    *v = static_cast<int64_t>(u);
    p_ += 8;
    n_ -= 8;
    return true;
  }
  // `n` bytes into `out`.
  bool bytes(size_t n, std::vector<uint8_t>* out) {
    if (n_ < n) return false;
    out->assign(p_, p_ + n);
    p_ += n;
    n_ -= n;
    return true;
  }
  size_t left() const { return n_; }

 private:
  const uint8_t* p_;
  size_t n_;
};

}  // namespace collage::rt_dynamic
