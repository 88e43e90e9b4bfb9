// UTF-8 decoding and encoding for the string operators and .npy string arrays.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace collage {

// The code points of `s`, or nullopt when it is not well-formed UTF-8 (overlong forms,
// surrogates and values above U+10FFFF are refused).
std::optional<std::u32string> utf8_decode(std::string_view s);
// The UTF-8 form of `s`, or nullopt when some value is not a Unicode scalar value.
std::optional<std::string> utf8_encode(std::u32string_view s);

}  // namespace collage
