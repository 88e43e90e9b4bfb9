// Text algorithms shared by the string module and the reference kernels (text_algorithms.h).
#include "text_algorithms.h"

#include <stdexcept>

namespace collage::text {
namespace {

// The ASCII characters Python's str.isspace accepts.
bool is_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

bool is_scalar_value(char32_t c) { return c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF); }

}  // namespace

std::vector<std::string_view> split(std::string_view s, std::string_view delimiter,
                                    int64_t maxsplit) {
  std::vector<std::string_view> pieces;
  const int64_t limit = maxsplit < 0 ? INT64_MAX : maxsplit;
  if (!delimiter.empty()) {
    size_t start = 0;
    for (int64_t n = 0; n < limit; ++n) {
      const size_t at = s.find(delimiter, start);
      if (at == std::string_view::npos) break;
      pieces.push_back(s.substr(start, at - start));
      start = at + delimiter.size();
    }
    pieces.push_back(s.substr(start));
    return pieces;
  }
  size_t i = 0;
  while (true) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (i == s.size()) break;
    if (static_cast<int64_t>(pieces.size()) == limit) {
      pieces.push_back(s.substr(i));
      break;
    }
    size_t j = i;
    while (j < s.size() && !is_space(s[j])) ++j;
    pieces.push_back(s.substr(i, j - i));
    i = j;
  }
  return pieces;
}

std::optional<std::u32string> utf8_decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    int extra = 0;
    char32_t c = 0;
    char32_t min = 0;
    if (b < 0x80) {
      c = b;
    } else if ((b & 0xE0) == 0xC0) {
      extra = 1, c = b & 0x1F, min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      extra = 2, c = b & 0x0F, min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      extra = 3, c = b & 0x07, min = 0x10000;
    } else {
      return std::nullopt;
    }
    if (s.size() - i <= static_cast<size_t>(extra)) return std::nullopt;
    for (int k = 1; k <= extra; ++k) {
      const auto t = static_cast<unsigned char>(s[i + k]);
      if ((t & 0xC0) != 0x80) return std::nullopt;
      c = (c << 6) | (t & 0x3F);
    }
    if (c < min || !is_scalar_value(c)) return std::nullopt;
    out.push_back(c);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

std::optional<std::string> utf8_encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (!is_scalar_value(c)) return std::nullopt;
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::optional<CaseMapper> CaseMapper::make(std::string* error) {
  try {
    return CaseMapper(std::locale("C.UTF-8"));
  } catch (const std::runtime_error& e) {
    *error = std::string("the C.UTF-8 locale, which case mapping uses, is unavailable: ") +
             e.what();
  }
  return std::nullopt;
}

std::optional<std::string> CaseMapper::map(std::string_view s, bool upper) const {
  auto chars = utf8_decode(s);
  if (!chars) return std::nullopt;
  const auto& facet = std::use_facet<std::ctype<wchar_t>>(locale_);
  for (char32_t& c : *chars) {
    const auto w = static_cast<wchar_t>(c);
    c = static_cast<char32_t>(upper ? facet.toupper(w) : facet.tolower(w));
  }
  return utf8_encode(*chars);
}

}  // namespace collage::text
