// Shared helpers for operator definitions.
#include "ops/op_util.h"

namespace collage::ops {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else if (da == kDynamicDim || db == kDynamicDim) {
      // A size known only at run time is 1 or the other's there (the run checks which).
      out[i] = da == kDynamicDim ? db : da;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<Shape> broadcast_all(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) {
    auto b = broadcast_shapes(out, s);
    if (!b) return std::nullopt;
    out = *b;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.size(), 0);
  auto own = shape_strides(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[off + i] = in[i] == 1 ? 0 : own[i];
  return s;
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::string list_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace collage::ops
