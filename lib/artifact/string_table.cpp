// The artifact layout of str values (string_table.h).
#include "artifact/string_table.h"

#include "collage/runtime_module.h"

namespace collage::artifact {

uint64_t run_bytes(const TensorType& t) {
  if (t.dtype != DType::str) return t.bytes();
  return t.is_dynamic() ? 0 : static_cast<uint64_t>(t.numel()) * sizeof(collage_string_t);
}

std::string encode_string_table(const Tensor& t) {
  const auto* s = t.data<std::string>();
  const size_t n = static_cast<size_t>(t.numel());
  std::string out((n + 1) * 8, '\0');
  uint64_t offset = 0;
  auto put = [&](size_t i, uint64_t v) {
    for (int b = 0; b < 8; ++b) out[i * 8 + b] = static_cast<char>(v >> (8 * b));
  };
  for (size_t i = 0; i < n; ++i) {
    put(i, offset);
    offset += s[i].size();
  }
  put(n, offset);
  for (size_t i = 0; i < n; ++i) out += s[i];
  return out;
}

}  // namespace collage::artifact
