// Numbers as text and text as numbers, as ONNX Runtime's Cast to and from STRING does it: shared
// by the reference kernel of CastString (lib/ops/text_cast.cpp) and the strings runtime module.
// Plain C++, header only.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace collage::algorithms {

// A float or double value: "NaN", "INF", "-INF", else printf's "%.8g" of the value.
inline std::string float_to_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
  char buffer[64];
  const int n = std::snprintf(buffer, sizeof buffer, "%.8g", v);
  return std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0);
}

// The number that begins `s` after white space, as std::stod, std::stoll and std::stoull read it
// (base 10; the rest of the text is ignored; stoull takes a minus sign and wraps). False when no
// number begins the text or it is out of range.
inline bool text_to_double(std::string_view s, double* v) {
  const std::string text(s);
  char* end = nullptr;
  errno = 0;
  *v = std::strtod(text.c_str(), &end);
  return end != text.c_str() && errno != ERANGE;
}
inline bool text_to_int64(std::string_view s, int64_t* v) {
  const std::string text(s);
  char* end = nullptr;
  errno = 0;
  *v = std::strtoll(text.c_str(), &end, 10);
  return end != text.c_str() && errno != ERANGE;
}
inline bool text_to_uint64(std::string_view s, uint64_t* v) {
  const std::string text(s);
  char* end = nullptr;
  errno = 0;
  *v = std::strtoull(text.c_str(), &end, 10);
  return end != text.c_str() && errno != ERANGE;
}

}  // namespace collage::algorithms
