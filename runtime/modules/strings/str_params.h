// The strings module's kernel parameters: which operator, its integer and string attributes.
// The compiler's strings backend (lib/backends/strings) encodes them, the module decodes and
// checks them. Lists of values (LabelEncoder's keys and values, StringNormalizer's stopwords) are
// the kernel's last constants, so string constants travel in the artifact's string tables; an
// operand that is a constant comes before them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collage::rt_strings {

// The operators, by their collage operator name (StrOp::count_: none).
enum class StrOp : uint32_t {
  label_encoder,      // constants: keys, values, default (one value)
  string_normalizer,  // ints: case change (0 NONE, 1 LOWER, 2 UPPER), case sensitive;
                      // constants: stopwords (str[n], possibly n = 0)
  string_concat,
  string_equal,
  string_split,       // ints: maxsplit (-1: none); strings: delimiter
  regex_full_match,   // strings: pattern
  cast_string,        // - (Cast to or from STRING; the types are the arguments')
  count_
};

StrOp str_op_of(std::string_view op_name);
std::string_view str_op_name(StrOp op);

struct StrParams {
  StrOp op = StrOp::count_;
  // Per operand of the operator: >= 0, the kernel input of that index; <= -2, the kernel
  // constant -2 - s (an operand the compiler knows).
  std::vector<int64_t> sources;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

// "STRP", version 1, op, then the sources, the ints and the strings, each list with its u32
// count (sources and ints as i64), each string
// with its u32 length; little-endian.
std::vector<uint8_t> encode_params(const StrParams& p);
// Empty on success, else what is wrong (truncated, another version, trailing bytes).
std::string decode_params(const uint8_t* data, size_t size, StrParams* p);

}  // namespace collage::rt_strings
