// Value layouts: names, the fit check and the reorders between plain and channel-blocked.
#include "collage/layout.h"

#include <cassert>
#include <cstring>

#include "core/str_cat.h"

namespace collage {
namespace {

constexpr int32_t kMaxBlock = 64;

// Copies every element between the plain and the blocked order (`to_blocked` picks the way).
Tensor reorder(const Tensor& src, const Layout& layout, bool to_blocked) {
  assert(check_layout(layout, src.type()).ok());
  Tensor dst(src.dtype(), src.shape());
  if (layout.plain()) {
    std::memcpy(dst.raw(), src.raw(), src.bytes());
    return dst;
  }
  const Shape& s = src.shape();
  const int64_t n = s[0], c = s[1], b = layout.c_block;
  int64_t spatial = 1;
  for (size_t i = 2; i < s.size(); ++i) spatial *= s[i];
  const size_t es = dtype_size(src.dtype());
  const auto* in = static_cast<const uint8_t*>(src.raw());
  auto* out = static_cast<uint8_t*>(dst.raw());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < spatial; ++p) {
        const int64_t plain = (i * c + ch) * spatial + p;
        const int64_t blocked = ((i * (c / b) + ch / b) * spatial + p) * b + ch % b;
        const int64_t from = to_blocked ? plain : blocked, to = to_blocked ? blocked : plain;
        std::memcpy(out + to * es, in + from * es, es);
      }
  return dst;
}

}  // namespace

std::string layout_name(const Layout& layout, size_t rank) {
  if (layout.plain()) return "plain";
  static constexpr char kSpatial[] = "dhw";
  const size_t spatial = rank >= 2 ? rank - 2 : 0;
  std::string s = "nC";
  if (spatial <= 3) {
    s += std::string(kSpatial + 3 - spatial);
  } else {
    s += str_cat("[", spatial, " axes]");
  }
  return str_cat(s, layout.c_block, "c");
}

absl::Status check_layout(const Layout& layout, const TensorType& type) {
  if (layout.plain()) return absl::OkStatus();
  if (layout.c_block < 1 || layout.c_block > kMaxBlock)
    return absl::InvalidArgumentError(
        str_cat("channel block ", layout.c_block, " is not in 1..", kMaxBlock));
  if (type.shape.size() < 3)
    return absl::InvalidArgumentError(str_cat("a ", type_to_string(type),
                                              " value has no channel and spatial axes to block"));
  if (type.shape[1] % layout.c_block != 0)
    return absl::InvalidArgumentError(str_cat(type.shape[1], " channels of ", type_to_string(type),
                                              " are not a multiple of the block ", layout.c_block));
  return absl::OkStatus();
}

Tensor to_layout(const Tensor& plain, const Layout& layout) {
  return reorder(plain, layout, true);
}

Tensor from_layout(const Tensor& blocked, const Layout& layout) {
  return reorder(blocked, layout, false);
}

}  // namespace collage
