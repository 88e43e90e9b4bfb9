// NumPy string arrays (npy_strings.h).
#include "io/npy_strings.h"

#include <algorithm>
#include <charconv>

#include "core/str_cat.h"
#include "text_algorithms.h"
#include "io/le_bytes.h"

namespace collage::io {
namespace {

absl::Status bad(std::string_view what) {
  return absl::InvalidArgumentError(str_cat("invalid .npy data: ", what));
}

// The kind ('U', 'S', 'O' or another) and length of a descr such as "<U5".
std::pair<char, std::string_view> kind_of(std::string_view descr) {
  if (!descr.empty() && std::string_view("<>|=").find(descr[0]) != std::string_view::npos)
    descr.remove_prefix(1);
  if (descr.empty()) return {'\0', descr};
  return {descr[0], descr.substr(1)};
}

}  // namespace

absl::StatusOr<std::optional<size_t>> npy_string_element_size(std::string_view descr) {
  const auto [kind, rest] = kind_of(descr);
  if (kind == 'O')
    return bad(str_cat("dtype '", descr, "' holds pickled Python objects, which collage does not "
                       "read; save strings with a fixed-width dtype (np.asarray(a, dtype=str))"));
  if (kind != 'U' && kind != 'S') return std::optional<size_t>();
  if (descr[0] == '>' && kind == 'U')
    return bad(str_cat("big-endian dtype '", descr, "' is not supported"));
  size_t length = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), length);
  if (ec != std::errc() || end != rest.data() + rest.size() || length > (size_t{1} << 24))
    return bad(str_cat("string dtype '", descr, "' has no valid length"));
  return std::optional<size_t>(kind == 'U' ? 4 * length : length);
}

absl::StatusOr<Tensor> decode_npy_strings(std::string_view descr, const Shape& shape,
                                          std::span<const uint8_t> data) {
  auto size = npy_string_element_size(descr);
  if (!size.ok()) return size.status();
  const bool utf32 = kind_of(descr).first == 'U';
  Tensor t(DType::str, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint8_t* e = data.data() + static_cast<size_t>(i) * **size;
    std::string& out = t.data<std::string>()[i];
    if (!utf32) {
      out.assign(reinterpret_cast<const char*>(e), **size);
      while (!out.empty() && out.back() == '\0') out.pop_back();
      continue;
    }
    std::u32string chars;
    for (size_t k = 0; k < **size / 4; ++k) chars.push_back(static_cast<char32_t>(load_le(e + 4 * k, 4)));
    while (!chars.empty() && chars.back() == 0) chars.pop_back();
    auto utf8 = text::utf8_encode(chars);
    if (!utf8) return bad(str_cat("element ", i, " holds a value that is no Unicode character"));
    out = *std::move(utf8);
  }
  return t;
}

absl::StatusOr<NpyStrings> encode_npy_strings(const Tensor& t) {
  std::vector<std::u32string> elements;
  size_t width = 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    auto chars = text::utf8_decode(t.data<std::string>()[i]);
    if (!chars)
      return absl::InvalidArgumentError(str_cat(
          "element ", i, " is not UTF-8 text, which NumPy's unicode dtype cannot hold"));
    width = std::max(width, chars->size());
    elements.push_back(*std::move(chars));
  }
  NpyStrings out{str_cat("<U", width), std::string()};
  out.data.assign(elements.size() * width * 4, '\0');
  for (size_t i = 0; i < elements.size(); ++i)
    for (size_t k = 0; k < elements[i].size(); ++k) {
      const char32_t c = elements[i][k];
      for (int b = 0; b < 4; ++b)
        out.data[(i * width + k) * 4 + b] = static_cast<char>((c >> (8 * b)) & 0xFF);
    }
  return out;
}

}  // namespace collage::io
