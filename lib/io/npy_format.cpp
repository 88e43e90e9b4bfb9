// Decoding and encoding of the NumPy .npy format (header dictionary and raw C-order data).
#include "io/npy_format.h"

#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "core/str_cat.h"
#include "io/le_bytes.h"
#include "io/npy_strings.h"

namespace collage::io {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// np.save pads the header so that the first axis can grow to this many digits in place.
constexpr size_t kGrowthAxisMaxDigits = 21;
constexpr size_t kArrayAlign = 64;

struct NpyCode {
  DType dtype;
  char kind;  // NumPy's kind character: 'f' float, 'i' signed, 'u' unsigned integer, 'b' bool
  int size;
};
constexpr NpyCode kCodes[] = {
    {DType::f32, 'f', 4}, {DType::f16, 'f', 2}, {DType::i8, 'i', 1},
    {DType::i32, 'i', 4}, {DType::i64, 'i', 8}, {DType::boolean, 'b', 1},
    {DType::f64, 'f', 8}, {DType::i16, 'i', 2}, {DType::u8, 'u', 1},
    {DType::u16, 'u', 2}, {DType::u32, 'u', 4}, {DType::u64, 'u', 8},
};
constexpr std::string_view kSupported =
    "float32, float16, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, "
    "unicode (U) and bytes (S) strings";

absl::Status bad(std::string_view what) {
  return absl::InvalidArgumentError(str_cat("invalid .npy data: ", what));
}

// Parses the Python dict literal np.save writes, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct HeaderFields {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  absl::StatusOr<HeaderFields> parse() {
    HeaderFields f;
    bool have_descr = false, have_order = false, have_shape = false;
    if (!consume('{')) return error("expected '{'");
    while (!consume('}')) {
      auto key = string();
      if (!key.ok()) return key.status();
      if (!consume(':')) return error("expected ':'");
      absl::Status s;
      if (*key == "descr" && !have_descr) {
        have_descr = true;
        s = descr(f.descr);
      } else if (*key == "fortran_order" && !have_order) {
        have_order = true;
        s = boolean(f.fortran_order);
      } else if (*key == "shape" && !have_shape) {
        have_shape = true;
        s = tuple(f.shape);
      } else {
        return error(str_cat("unexpected or repeated key '", *key, "'"));
      }
      if (!s.ok()) return s;
      if (!consume(',')) {
        if (!consume('}')) return error("expected ',' or '}'");
        break;
      }
    }
    skip_space();
    if (pos_ != s_.size()) return error("unexpected text after '}'");
    if (!have_descr || !have_order || !have_shape)
      return error("header must have the keys 'descr', 'fortran_order' and 'shape'");
    return f;
  }

 private:
  absl::Status error(std::string_view what) const {
    std::string_view shown = s_.substr(0, 200);
    return bad(str_cat("header ", what, " at offset ", pos_, " in \"", shown,
                       shown.size() < s_.size() ? "...\"" : "\""));
  }
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool consume_word(std::string_view w) {
    skip_space();
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  absl::StatusOr<std::string> string() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      return error("expected a quoted string");
    const char quote = s_[pos_++];
    size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) return error("unterminated string");
    std::string v(s_.substr(pos_, end - pos_));
    if (v.find('\\') != std::string::npos) return error("escape sequences are not supported");
    pos_ = end + 1;
    return v;
  }
  absl::Status descr(std::string& out) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '[')
      return bad("structured (record) dtypes are not supported");
    auto v = string();
    if (!v.ok()) return v.status();
    out = *std::move(v);
    return absl::OkStatus();
  }
  absl::Status boolean(bool& out) {
    if (consume_word("True")) {
      out = true;
    } else if (consume_word("False")) {
      out = false;
    } else {
      return error("expected True or False");
    }
    return absl::OkStatus();
  }
  absl::Status tuple(Shape& out) {
    if (!consume('(')) return error("expected '(' starting the shape");
    out.clear();
    while (!consume(')')) {
      skip_space();
      size_t start = pos_;
      int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - (s_[pos_] - '0')) / 10)
          return error("dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      if (pos_ == start) return error("expected a non-negative integer dimension");
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long literal
      out.push_back(v);
      if (!consume(',')) {
        if (!consume(')')) return error("expected ',' or ')' in the shape");
        break;
      }
    }
    return absl::OkStatus();
  }

  std::string_view s_;
  size_t pos_ = 0;
};

absl::StatusOr<DType> dtype_from_descr(std::string_view descr) {
  std::string_view code = descr;
  char order = '=';
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' || code[0] == '=')) {
    order = code[0];
    code.remove_prefix(1);
  }
  if (order == '=') order = std::endian::native == std::endian::little ? '<' : '>';
  for (const NpyCode& c : kCodes) {
    if (code.size() != 2 || code[0] != c.kind || code[1] != static_cast<char>('0' + c.size))
      continue;
    if (order == '>' && c.size > 1)
      return bad(str_cat("big-endian dtype '", descr,
                         "' is not supported; save the array little-endian ",
                         "(e.g. a.astype(a.dtype.newbyteorder('<')))"));
    if (order == '|' && c.size > 1) return bad(str_cat("dtype '", descr, "' lacks a byte order"));
    return c.dtype;
  }
  return bad(str_cat("unsupported dtype '", descr, "'; supported: ", kSupported));
}

std::string shape_repr(const Shape& shape) {
  if (shape.size() == 1) return str_cat("(", shape[0], ",)");
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += str_cat(i ? ", " : "", shape[i]);
  return s + ")";
}

}  // namespace

absl::StatusOr<Tensor> decode_npy(std::span<const uint8_t> bytes, std::shared_ptr<void> owner) {
  static_assert(std::endian::native == std::endian::little,
                "the .npy reader assumes a little-endian host");
  if (bytes.size() < kMagic.size() + 2 ||
      std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0)
    return bad("missing the \\x93NUMPY magic (not a .npy file)");
  const int major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0)
    return bad(str_cat("unsupported format version ", major, ".", minor));
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t header_start = kMagic.size() + 2 + len_bytes;
  if (bytes.size() < header_start) return bad("truncated before the header length");
  const size_t header_len = load_le(bytes.data() + 8, static_cast<int>(len_bytes));
  if (header_len > bytes.size() - header_start)
    return bad(str_cat("header of ", header_len, " bytes runs past the end of the data (",
                       bytes.size(), " bytes)"));
  std::string_view header(reinterpret_cast<const char*>(bytes.data()) + header_start, header_len);

  auto fields = HeaderParser(header).parse();
  if (!fields.ok()) return fields.status();
  if (fields->fortran_order)
    return bad(
        "Fortran-order arrays are not supported; save a C-order array "
        "(np.ascontiguousarray)");
  auto string_size = npy_string_element_size(fields->descr);
  if (!string_size.ok()) return string_size.status();
  absl::StatusOr<DType> dtype = DType::str;
  if (!*string_size) dtype = dtype_from_descr(fields->descr);
  if (!dtype.ok()) return dtype.status();

  int64_t numel = 1;
  for (int64_t d : fields->shape) {
    if (__builtin_mul_overflow(numel, d, &numel))
      return bad(str_cat("shape ", shape_repr(fields->shape), " has too many elements"));
  }
  const size_t esize = *string_size ? **string_size : dtype_size(*dtype);
  const size_t available = bytes.size() - header_start - header_len;
  if (esize && static_cast<uint64_t>(numel) > available / esize)
    return bad(str_cat("truncated: shape ", shape_repr(fields->shape), " of '", fields->descr,
                       "' needs ", numel, " elements of ", esize, " bytes, only ", available,
                       " bytes present"));
  const size_t data_bytes = static_cast<size_t>(numel) * esize;
  if (available != data_bytes)
    return bad(str_cat(available - data_bytes, " unexpected bytes after the array data"));

  const uint8_t* src = bytes.data() + header_start + header_len;
  if (*string_size) return decode_npy_strings(fields->descr, fields->shape, {src, data_bytes});
  Tensor t;
  if (owner && reinterpret_cast<uintptr_t>(src) % kArrayAlign == 0) {
    t = Tensor::wrap(*dtype, fields->shape, const_cast<uint8_t*>(src), std::move(owner));
  } else {
    t = Tensor(*dtype, fields->shape);
    if (data_bytes) std::memcpy(t.raw(), src, data_bytes);
  }
  if (*dtype == DType::boolean) {
    auto* b = t.data<uint8_t>();
    for (int64_t i = 0; i < numel; ++i) b[i] = b[i] != 0;
  }
  return t;
}

absl::StatusOr<std::string> encode_npy_header(const Tensor& t) {
  if (t.empty()) return absl::InvalidArgumentError("cannot save an empty (unallocated) tensor");
  if (t.dtype() == DType::str)
    return absl::InvalidArgumentError("a str tensor's header comes with encode_npy_strings");
  std::string descr;
  for (const NpyCode& c : kCodes) {
    if (c.dtype == t.dtype())
      descr = str_cat(c.size == 1 ? '|' : '<', c.kind, static_cast<char>('0' + c.size));
  }
  if (descr.empty())
    return absl::InvalidArgumentError(
        str_cat("dtype ", dtype_name(t.dtype()), " has no NumPy equivalent; cast it to f32 first"));
  return encode_npy_header(descr, t.shape());
}

absl::StatusOr<std::string> encode_npy_header(std::string_view descr, const Shape& shape) {
  std::string dict = str_cat("{'descr': '", descr,
                             "', 'fortran_order': False, 'shape': ", shape_repr(shape), ", }");
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - str_cat(shape[0]).size(), ' ');

  // Version 1.0 has a 16-bit header length; longer headers need version 2.0 (as numpy does).
  for (int major : {1, 2}) {
    const size_t prefix = kMagic.size() + 2 + (major == 1 ? 2 : 4);
    const size_t hlen = dict.size() + 1;  // the terminating newline
    const size_t pad = kArrayAlign - (prefix + hlen) % kArrayAlign;
    const size_t total_len = hlen + pad;
    if (major == 1 && total_len > 0xFFFF) continue;
    std::string out(kMagic);
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < prefix - kMagic.size() - 2; ++i)
      out += static_cast<char>((total_len >> (8 * i)) & 0xFF);
    out += dict;
    out.append(pad, ' ');
    out += '\n';
    return out;
  }
  return absl::InvalidArgumentError("rank too large for a .npy header");
}

}  // namespace collage::io
