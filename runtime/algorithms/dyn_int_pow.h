// Pow of an integer base to an integer exponent (ONNX Pow on integers), shared by the reference
// kernel (lib/ops/elementwise_binary.cpp) and the runtime's dynamic module: header-only.
#pragma once

#include <cstdint>
#include <type_traits>

namespace collage::rt_dynamic {

// x^n, wrapping on overflow (the product taken in the unsigned type of B). A negative n gives the
// integer part of 1 / x^|n|: 1 and -1 keep their magnitude, everything else (0 included) gives 0.
template <typename B>
B int_pow(B x, int64_t n) {
  static_assert(std::is_integral_v<B>);
  using U = std::make_unsigned_t<decltype(B() * B())>;
  if (n < 0) {
    if (x == B(1)) return B(1);
    if (x == B(-1)) return (n & 1) ? B(-1) : B(1);
    return B(0);
  }
  U result = 1;
  U base = static_cast<U>(x);
  while (n) {
    if (n & 1) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
    n >>= 1;
  }
  return static_cast<B>(result);
}

}  // namespace collage::rt_dynamic
