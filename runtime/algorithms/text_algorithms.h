// Text algorithms the string runtime module and the compiler's reference kernels share (as
// runtime/algorithms shares NonMaxSuppression and Resize), so that an artifact computes what the
// reference defines: Python's str.split as ONNX's StringSplit uses it, UTF-8, and Unicode's simple
// case mapping. Plain C++: no collage header, no library.
#pragma once

#include <cstdint>
#include <locale>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collage::text {

// Python's str.split(delimiter, maxsplit) (maxsplit -1: no limit), which ONNX's reference
// implementation uses: an empty delimiter splits at runs of ASCII whitespace and drops empty
// pieces, and the rest after maxsplit pieces is kept as it is but for its leading whitespace.
// The pieces point into `s`.
std::vector<std::string_view> split(std::string_view s, std::string_view delimiter,
                                    int64_t maxsplit);

// The code points of `s`, or nullopt when it is not well-formed UTF-8 (overlong forms,
// surrogates and values above U+10FFFF are refused).
std::optional<std::u32string> utf8_decode(std::string_view s);
// The UTF-8 form of `s`, or nullopt when some value is not a Unicode scalar value.
std::optional<std::string> utf8_encode(std::u32string_view s);

// Case mapping through the C.UTF-8 locale's tables (a locale object, never the global locale).
class CaseMapper {
 public:
  // nullopt, with the reason in *error, when the C.UTF-8 locale is unavailable.
  static std::optional<CaseMapper> make(std::string* error);
  // `s` in lower (upper) case, or nullopt when it is not UTF-8.
  std::optional<std::string> map(std::string_view s, bool upper) const;

 private:
  explicit CaseMapper(std::locale l) : locale_(std::move(l)) {}
  std::locale locale_;
};

}  // namespace collage::text
