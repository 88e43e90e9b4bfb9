// Strided copies, per-axis gathers and fills shared by the tensor operators, and the registration
// of the tensor operator family.
#include "ops/tensor_copy.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "ops/op_sets.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

// Calls f(std::integral_constant<size_t, E>) for the element sizes collage dtypes have.
template <typename F>
void dispatch_esize(size_t esize, F&& f) {
  switch (esize) {
    case 1:
      f(std::integral_constant<size_t, 1>());
      return;
    case 2:
      f(std::integral_constant<size_t, 2>());
      return;
    case 4:
      f(std::integral_constant<size_t, 4>());
      return;
    case 8:
      f(std::integral_constant<size_t, 8>());
      return;
  }
  assert(false && "element size of no dtype");
}

// Float to integer with saturation (a plain cast of an out-of-range float is undefined); NaN is 0.
template <typename I>
I saturate(float v) {
  if (!(v == v)) return 0;
  if (v <= static_cast<float>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<float>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

struct Dim {
  int64_t n, ds, ss;  // extent, destination and source strides (elements)
};

// Drops size-1 axes and merges axes that are contiguous in both views. Returns false when the
// shape has no elements.
bool coalesce(const Shape& shape, const StridedView& d, const StridedView& s,
              std::vector<Dim>& dims) {
  dims.clear();
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) return false;
    if (shape[k] == 1) continue;
    Dim x{shape[k], d.strides[k], s.strides[k]};
    if (!dims.empty()) {
      Dim& p = dims.back();
      if (p.ds == x.ds * x.n && p.ss == x.ss * x.n) {
        p = {p.n * x.n, x.ds, x.ss};
        continue;
      }
    }
    dims.push_back(x);
  }
  if (dims.empty()) dims.push_back({1, 1, 1});
  return true;
}

}  // namespace

StridedView dense_view(const Shape& shape, int64_t offset) {
  return {shape_strides(shape), offset};
}

void copy_strided(const Shape& shape, size_t esize, void* dst, const StridedView& d,
                  const void* src, const StridedView& s) {
  std::vector<Dim> dims;
  if (!coalesce(shape, d, s, dims)) return;
  const Dim inner = dims.back();
  dims.pop_back();
  // When the innermost axis is contiguous only in the destination (a transpose), copy square
  // tiles with an outer axis that is contiguous in the source, so both sides stay in cache.
  std::optional<Dim> across;
  if (inner.ds == 1 && inner.ss != 1) {
    for (size_t j = dims.size(); j-- > 0;) {
      if (dims[j].ss == 1) {
        across = dims[j];
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(j));
        break;
      }
    }
  }
  const int64_t e = static_cast<int64_t>(esize);
  auto* dp = static_cast<unsigned char*>(dst) + d.offset * e;
  auto* sp = static_cast<const unsigned char*>(src) + s.offset * e;
  dispatch_esize(esize, [&](auto size_tag) {
    constexpr int64_t E = decltype(size_tag)::value;
    constexpr int64_t kTile = 32;
    std::vector<int64_t> idx(dims.size(), 0);
    int64_t doff = 0, soff = 0;
    for (;;) {
      unsigned char* drow = dp + doff * E;
      const unsigned char* srow = sp + soff * E;
      if (inner.ds == 1 && inner.ss == 1) {
        std::memcpy(drow, srow, static_cast<size_t>(inner.n * E));
      } else if (across) {
        for (int64_t j0 = 0; j0 < across->n; j0 += kTile) {
          const int64_t j1 = std::min(across->n, j0 + kTile);
          for (int64_t i0 = 0; i0 < inner.n; i0 += kTile) {
            const int64_t i1 = std::min(inner.n, i0 + kTile);
            for (int64_t j = j0; j < j1; ++j)
              for (int64_t i = i0; i < i1; ++i)
                std::memcpy(drow + (j * across->ds + i) * E, srow + (j + i * inner.ss) * E, E);
          }
        }
      } else {
        for (int64_t i = 0; i < inner.n; ++i)
          std::memcpy(drow + i * inner.ds * E, srow + i * inner.ss * E, E);
      }
      int k = static_cast<int>(dims.size()) - 1;
      for (; k >= 0; --k) {
        doff += dims[k].ds;
        soff += dims[k].ss;
        if (++idx[k] < dims[k].n) break;
        doff -= dims[k].ds * dims[k].n;
        soff -= dims[k].ss * dims[k].n;
        idx[k] = 0;
      }
      if (k < 0) break;
    }
  });
}

void gather_by_axis(size_t esize, void* dst, const void* src,
                    const std::vector<std::vector<int64_t>>& tables, const void* fill) {
  auto* dp = static_cast<unsigned char*>(dst);
  auto* sp = static_cast<const unsigned char*>(src);
  if (tables.empty()) {
    std::memcpy(dp, sp, esize);
    return;
  }
  for (const auto& t : tables)
    if (t.empty()) return;
  const std::vector<int64_t>& inner = tables.back();
  const auto n = static_cast<int64_t>(inner.size());
  bool contiguous = inner[0] >= 0;
  for (int64_t j = 1; j < n && contiguous; ++j) contiguous = inner[j] == inner[0] + j;
  const size_t outer_rank = tables.size() - 1;
  dispatch_esize(esize, [&](auto size_tag) {
    constexpr int64_t E = decltype(size_tag)::value;
    std::vector<int64_t> idx(outer_rank, 0);
    unsigned char* out = dp;
    for (;;) {
      int64_t base = 0;
      bool outside = false;
      for (size_t k = 0; k < outer_rank; ++k) {
        int64_t t = tables[k][idx[k]];
        outside |= t < 0;
        base += t;
      }
      if (outside) {
        for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * E, fill, E);
      } else if (contiguous) {
        std::memcpy(out, sp + (base + inner[0]) * E, static_cast<size_t>(n * E));
      } else {
        for (int64_t j = 0; j < n; ++j) {
          int64_t t = inner[j];
          std::memcpy(out + j * E, t < 0 ? fill : sp + (base + t) * E, E);
        }
      }
      out += n * E;
      int k = static_cast<int>(outer_rank) - 1;
      for (; k >= 0; --k) {
        if (++idx[k] < static_cast<int64_t>(tables[k].size())) break;
        idx[k] = 0;
      }
      if (k < 0) break;
    }
  });
}

void fill_elements(void* dst, int64_t n, size_t esize, const void* value) {
  auto* dp = static_cast<unsigned char*>(dst);
  dispatch_esize(esize, [&](auto size_tag) {
    constexpr int64_t E = decltype(size_tag)::value;
    unsigned char v[E];
    std::memcpy(v, value, E);
    for (int64_t i = 0; i < n; ++i) std::memcpy(dp + i * E, v, E);
  });
}

void store_float_as(float v, DType t, void* out) {
  switch (t) {
    case DType::f32:
      std::memcpy(out, &v, 4);
      return;
    case DType::f16: {
      uint16_t h = float_to_half(v);
      std::memcpy(out, &h, 2);
      return;
    }
    case DType::bf16: {
      uint16_t b = float_to_bfloat16(v);
      std::memcpy(out, &b, 2);
      return;
    }
    case DType::i8:
      *static_cast<int8_t*>(out) = saturate<int8_t>(v);
      return;
    case DType::i32: {
      auto i = saturate<int32_t>(v);
      std::memcpy(out, &i, 4);
      return;
    }
    case DType::i64: {
      auto i = saturate<int64_t>(v);
      std::memcpy(out, &i, 8);
      return;
    }
    case DType::boolean:
      *static_cast<uint8_t*>(out) = v != 0.f;
      return;
    case DType::f64: {
      const double d = v;
      std::memcpy(out, &d, 8);
      return;
    }
    case DType::i16: {
      auto i = saturate<int16_t>(v);
      std::memcpy(out, &i, 2);
      return;
    }
    case DType::u8:
      *static_cast<uint8_t*>(out) = saturate<uint8_t>(v);
      return;
    case DType::u16: {
      auto i = saturate<uint16_t>(v);
      std::memcpy(out, &i, 2);
      return;
    }
    case DType::u32: {
      auto i = saturate<uint32_t>(v);
      std::memcpy(out, &i, 4);
      return;
    }
    case DType::u64: {
      auto i = saturate<uint64_t>(v);
      std::memcpy(out, &i, 8);
      return;
    }    case DType::str:
      return;  // Pad's value never applies to strings: Pad refuses them
  }
}

void add_tensor_op(OpRegistry& r, OpDef def) {
  declare_attr_inputs(def);
  [[maybe_unused]] absl::Status s = r.add(std::move(def));
  assert(s.ok());
}

void register_tensor_ops(OpRegistry& r) {
  register_concat_split_ops(r);
  register_slice_gather_ops(r);
  register_reshape_ops(r);
  register_transpose_op(r);
  register_pad_op(r);
  register_expand_tile_ops(r);
  register_generator_ops(r);
  register_resize_op(r);
}

}  // namespace collage::ops
