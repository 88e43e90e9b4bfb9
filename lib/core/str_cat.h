// str_cat: string concatenation for error messages. Debian's Abseil is built without
// std::string_view aliasing, so absl::StrCat does not take std::string_view; this does.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace collage {

namespace detail {
inline void append_piece(std::string& s, std::string_view v) { s.append(v); }
inline void append_piece(std::string& s, absl::string_view v) { s.append(v.data(), v.size()); }
inline void append_piece(std::string& s, const std::string& v) { s.append(v); }
inline void append_piece(std::string& s, const char* v) { s.append(v ? v : "(null)"); }
inline void append_piece(std::string& s, char c) { s.push_back(c); }
template <std::integral T>
  requires(!std::same_as<T, char> && !std::same_as<T, bool>)
void append_piece(std::string& s, T v) {
  s.append(std::to_string(v));
}
inline void append_piece(std::string& s, bool v) { s.append(v ? "true" : "false"); }
void append_piece(std::string& s, double v);
}  // namespace detail

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::string s;
  (detail::append_piece(s, args), ...);
  return s;
}

}  // namespace collage
