// Shape-driven operators in the dynamic module, for shapes or bounds computed at run time:
// Expand (numpy broadcasting to a shape), Tile, ConstantOfShape and Range (f32, i32, i64, in the
// element type as the reference kernels of lib/ops compute them).
#include <cmath>
#include <cstring>

#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Copies `x` into the dense output of `shape` reading element index[d] % x.shape[d] of each
// dimension (x's dimensions aligned to the right): broadcasting when x's is 1, tiling otherwise.
void repeat_copy(const Value& x, const std::vector<int64_t>& shape, uint8_t* out) {
  const size_t esize = element_size(x.dtype);
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t shift = rank - static_cast<int64_t>(x.shape.size());
  const std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<int64_t> index(rank, 0);
  const int64_t n = numel(shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = 0;
    for (int64_t d = shift; d < rank; ++d) at += index[d] % x.shape[d - shift] * strides[d - shift];
    std::memcpy(out + i * esize, x.data + at * esize, esize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

void expand(const DynParams& p, const Value& x, Outputs& out) {
  const std::vector<int64_t>& want = p.list(0);
  const size_t rank = std::max(want.size(), x.shape.size());
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    const size_t a = i + x.shape.size() >= rank ? i + x.shape.size() - rank : SIZE_MAX;
    const size_t b = i + want.size() >= rank ? i + want.size() - rank : SIZE_MAX;
    const int64_t dx = a == SIZE_MAX ? 1 : x.shape[a], dw = b == SIZE_MAX ? 1 : want[b];
    if (dw < 0 || (dx != dw && dx != 1 && dw != 1))
      throw KernelError("cannot broadcast input " + type_text(x.dtype, x.shape) + " with shape " +
                        list_text(want));
    shape[i] = dx == 1 ? dw : dx;
  }
  uint8_t* o = out.make(0, shape);
  if (numel(shape)) repeat_copy(x, shape, o);
}

void tile(const DynParams& p, const Value& x, Outputs& out) {
  const std::vector<int64_t>& repeats = p.list(0);
  if (repeats.size() != x.shape.size())
    throw KernelError("repeats " + list_text(repeats) + " has " + std::to_string(repeats.size()) +
                      " entries for input " + type_text(x.dtype, x.shape));
  std::vector<int64_t> shape(x.shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 0) throw KernelError("repeats " + list_text(repeats) + " has a negative entry");
    shape[d] = x.shape[d] * repeats[d];
  }
  uint8_t* o = out.make(0, shape);
  if (numel(shape)) repeat_copy(x, shape, o);
}

// ConstantOfShape: lists [shape], [the value's bytes, little-endian, in one i64] (empty: zeros).
void constant_of_shape(const DynParams& p, Outputs& out) {
  const std::vector<int64_t>& shape = p.list(0);
  for (int64_t d : shape)
    if (d < 0) throw KernelError("shape " + list_text(shape) + " has a negative entry");
  uint8_t* o = out.make(0, shape);
  const size_t esize = element_size(out.dtype(0));
  uint8_t value[8] = {};
  const auto bits = static_cast<uint64_t>(p.value(1, 0));
  for (size_t b = 0; b < 8; ++b) value[b] = static_cast<uint8_t>(bits >> (8 * b));
  for (int64_t i = 0; i < numel(shape); ++i) std::memcpy(o + i * esize, value, esize);
}

template <typename T>
void range_typed(const Value& start, const Value& limit, const Value& delta, Outputs& out) {
  for (const Value* v : {&start, &limit, &delta})
    if (v->numel() != 1) throw KernelError("start, limit and delta must be scalars");
  const T s = start.as<T>()[0], l = limit.as<T>()[0], step = delta.as<T>()[0];
  if (step == T(0)) throw KernelError("delta is 0");
  const double diff = std::is_integral_v<T> ? static_cast<double>(l) - static_cast<double>(s)
                                            : static_cast<double>(l - s);
  const double n = std::ceil(diff / static_cast<double>(step));
  if (!(n < 9.0e18)) throw KernelError("the range has too many elements");
  const int64_t count = n > 0 ? static_cast<int64_t>(n) : 0;
  T* o = out.make_as<T>(0, {count});
  T v = s;
  for (int64_t i = 0; i < count; ++i) {
    o[i] = v;
    if (i + 1 < count) v = static_cast<T>(v + step);
  }
}

void range(const std::vector<Value>& in, Outputs& out) {
  const int32_t t = in[0].dtype;
  if (in[1].dtype != t || in[2].dtype != t)
    throw KernelError("start, limit and delta differ in type");
  switch (t) {
    case COLLAGE_DTYPE_F32: range_typed<float>(in[0], in[1], in[2], out); break;
    case COLLAGE_DTYPE_I32: range_typed<int32_t>(in[0], in[1], in[2], out); break;
    case COLLAGE_DTYPE_I64: range_typed<int64_t>(in[0], in[1], in[2], out); break;
    default: throw KernelError("Range takes f32, i32 or i64 here, not " + type_text(t, {}));
  }
}

}  // namespace

bool run_generate_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  switch (p.op) {
    case DynOp::expand: expand(p, in[0], out); return true;
    case DynOp::tile: tile(p, in[0], out); return true;
    case DynOp::constant_of_shape: constant_of_shape(p, out); return true;
    case DynOp::range: range(in, out); return true;
    default: return false;
  }
}

}  // namespace collage::rt_dynamic
