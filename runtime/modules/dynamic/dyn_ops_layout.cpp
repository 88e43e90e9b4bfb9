// Data movement in the dynamic module: Gather, GatherElements, Slice, Squeeze, Unsqueeze, Reshape, Transpose,
// Concat, Cast and Identity on tensors whose shapes are known only now (Cast between f32, f64,
// f16, bf16, i8, i32, i64 and bool). ONNX semantics, as the reference kernels define them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "dyn_half.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

// Copies the elements of `in` read through `strides` (one per output dimension, in elements of
// the input) into the dense `out` of shape `shape`, starting at element `offset` of the input.
void strided_copy(const uint8_t* in, int64_t offset, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& shape, size_t esize, uint8_t* out) {
  const int64_t n = numel(shape);
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = offset;
    for (int64_t d = 0; d < rank; ++d) at += index[d] * strides[d];
    std::memcpy(out + i * esize, in + at * esize, esize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

void copy_all(const Value& x, Outputs& out, const std::vector<int64_t>& shape) {
  if (numel(shape) != x.numel())
    throw KernelError("cannot reshape " + type_text(x.dtype, x.shape) + " to " +
                      type_text(x.dtype, shape));
  uint8_t* o = out.make(0, shape);
  if (x.numel()) std::memcpy(o, x.data, x.numel() * element_size(x.dtype));
}

void gather(const DynParams& p, const Value& data, const Value& idx, Outputs& out) {
  const auto rank = static_cast<int64_t>(data.shape.size());
  const int64_t axis = axis_in(p.value(0, 0), rank, "axis");
  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= data.shape[d];
    if (d > axis) inner *= data.shape[d];
  }
  const int64_t dim = data.shape[axis], count = idx.numel();
  const size_t row = inner * element_size(data.dtype);
  uint8_t* o = out.make(0, shape);
  for (int64_t j = 0; j < count; ++j) {
    int64_t k = int_at(idx, j);
    if (k < -dim || k >= dim)
      throw KernelError("index " + std::to_string(k) + " is out of range for axis " +
                        std::to_string(axis) + " of size " + std::to_string(dim));
    if (k < 0) k += dim;
    for (int64_t b = 0; b < outer; ++b)
      std::memcpy(o + (b * count + j) * row, data.data + (b * dim + k) * row, row);
  }
}

// out[i...] = data[i... with indices[i...] on `axis`]; indices have data's rank and, on the other
// axes, no larger a size.
void gather_elements(const DynParams& p, const Value& data, const Value& idx, Outputs& out) {
  const auto rank = static_cast<int64_t>(data.shape.size());
  const int64_t axis = axis_in(p.value(0, 0), rank, "axis");
  if (static_cast<int64_t>(idx.shape.size()) != rank)
    throw KernelError("indices " + type_text(idx.dtype, idx.shape) + " must have the rank of data " +
                      type_text(data.dtype, data.shape));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idx.shape[d] > data.shape[d])
      throw KernelError("indices " + type_text(idx.dtype, idx.shape) + " is larger than data " +
                        type_text(data.dtype, data.shape) + " on axis " + std::to_string(d));
  const size_t size = element_size(data.dtype);
  const std::vector<int64_t> ds = strides_of(data.shape);
  const int64_t dim = data.shape[axis], n = idx.numel();
  uint8_t* o = out.make(0, idx.shape);
  std::vector<int64_t> at(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = int_at(idx, i);
    if (k < -dim || k >= dim)
      throw KernelError("index " + std::to_string(k) + " is out of range for axis " +
                        std::to_string(axis) + " of size " + std::to_string(dim));
    if (k < 0) k += dim;
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) offset += (d == axis ? k : at[d]) * ds[d];
    std::memcpy(o + i * size, data.data + offset * size, size);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++at[d] < idx.shape[d]) break;
      at[d] = 0;
    }
  }
}

void slice(const DynParams& p, const Value& x, Outputs& out) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  const std::vector<int64_t>& starts = p.list(0);
  const std::vector<int64_t>& ends = p.list(1);
  const std::vector<int64_t>& axes = p.list(2);
  const std::vector<int64_t>& steps = p.list(3);
  if (ends.size() != starts.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size()))
    throw KernelError("starts, ends, axes and steps differ in length");
  std::vector<int64_t> shape = x.shape, begin(rank, 0), step(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = axis_in(axes.empty() ? static_cast<int64_t>(i) : axes[i], rank, "axis");
    const int64_t s = steps.empty() ? 1 : steps[i];
    if (s == 0) throw KernelError("a step is 0");
    const int64_t dim = x.shape[a];
    step[a] = s;
    if (dim == 0) {
      shape[a] = 0;
      continue;
    }
    // ONNX clamping: negative values count from the end; start and end in [0, dim] going
    // forward, start in [0, dim - 1] and end in [-1, dim - 1] going backward.
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    const int64_t b = s > 0 ? clamp(starts[i], 0, dim) : clamp(starts[i], 0, dim - 1);
    const int64_t e = s > 0 ? clamp(ends[i], 0, dim) : clamp(ends[i], -1, dim - 1);
    shape[a] = s > 0 ? std::max<int64_t>(0, (e - b + s - 1) / s)
                     : std::max<int64_t>(0, (b - e - s - 1) / -s);
    begin[a] = b;
  }
  const std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<int64_t> read(rank);
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    read[d] = strides[d] * step[d];
    if (shape[d] > 0) offset += begin[d] * strides[d];
  }
  uint8_t* o = out.make(0, shape);
  strided_copy(x.data, offset, read, shape, element_size(x.dtype), o);
}

void squeeze(const DynParams& p, const Value& x, Outputs& out) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  std::vector<bool> drop(rank, false);
  for (int64_t a : p.list(0)) drop[axis_in(a, rank, "axis")] = true;
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (p.list(0).empty()) drop[d] = x.shape[d] == 1;
    if (drop[d] && x.shape[d] != 1)
      throw KernelError("cannot squeeze axis " + std::to_string(d) + " of " +
                        type_text(x.dtype, x.shape) + ": its size is not 1");
    if (!drop[d]) shape.push_back(x.shape[d]);
  }
  copy_all(x, out, shape);
}

void unsqueeze(const DynParams& p, const Value& x, Outputs& out) {
  const auto rank = static_cast<int64_t>(x.shape.size() + p.list(0).size());
  std::vector<bool> added(rank, false);
  for (int64_t a : p.list(0)) {
    const int64_t at = axis_in(a, rank, "axis");
    if (added[at]) throw KernelError("axis " + std::to_string(a) + " is listed twice");
    added[at] = true;
  }
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) shape.push_back(added[d] ? 1 : x.shape[next++]);
  copy_all(x, out, shape);
}

void reshape(const DynParams& p, const Value& x, Outputs& out) {
  std::vector<int64_t> shape = p.list(0);
  const bool allowzero = p.value(1, 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= x.shape.size()) throw KernelError("a 0 in the shape has no input dimension");
      shape[d] = x.shape[d];
    }
    if (shape[d] == -1) {
      if (infer >= 0) throw KernelError("the shape has two -1");
      infer = static_cast<int64_t>(d);
      continue;
    }
    if (shape[d] < 0) throw KernelError("the shape has a negative size");
    known *= shape[d];
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      throw KernelError("cannot infer the -1 of the shape for " + type_text(x.dtype, x.shape));
    shape[infer] = x.numel() / known;
  }
  copy_all(x, out, shape);
}

void transpose(const DynParams& p, const Value& x, Outputs& out) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> perm = p.list(0);
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != rank)
    throw KernelError("perm has " + std::to_string(perm.size()) + " axes for rank " +
                      std::to_string(rank));
  const std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<int64_t> shape(rank), read(rank);
  std::vector<bool> used(rank, false);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t from = axis_in(perm[d], rank, "perm entry");
    if (used[from]) throw KernelError("perm lists an axis twice");
    used[from] = true;
    shape[d] = x.shape[from];
    read[d] = strides[from];
  }
  uint8_t* o = out.make(0, shape);
  strided_copy(x.data, 0, read, shape, element_size(x.dtype), o);
}

void concat(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  const Value& first = in[0];
  const auto rank = static_cast<int64_t>(first.shape.size());
  const int64_t axis = axis_in(p.value(0, 0), rank, "axis");
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (const Value& v : in) {
    bool fits = v.dtype == first.dtype && v.shape.size() == first.shape.size();
    for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || v.shape[d] == first.shape[d];
    if (!fits)
      throw KernelError("cannot concatenate " + type_text(v.dtype, v.shape) + " with " +
                        type_text(first.dtype, first.shape) + " on axis " + std::to_string(axis));
    shape[axis] += v.shape[axis];
  }
  int64_t outer = 1, inner = static_cast<int64_t>(element_size(first.dtype));
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  uint8_t* o = out.make(0, shape);
  int64_t at = 0;
  for (const Value& v : in) {
    const int64_t block = v.shape[axis] * inner;
    for (int64_t b = 0; b < outer; ++b)
      std::memcpy(o + b * shape[axis] * inner + at, v.data + b * block, block);
    at += block;
  }
}

// Cast's conversions as the reference's (lib/ops/elementwise_common.h, convert_value): a float
// to an integer saturates at the type's limits and NaN gives 0; 16-bit floats go through float.
template <typename To, typename From>
void convert(const From* in, To* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<To, uint8_t>) {
      out[i] = static_cast<double>(in[i]) != 0.0;
    } else if constexpr (std::is_integral_v<To> && kFloatElement<From>) {
      const auto d = static_cast<double>(in[i]);
      if (std::isnan(d)) out[i] = 0;
      else if (d <= static_cast<double>(std::numeric_limits<To>::min()))
        out[i] = std::numeric_limits<To>::min();
      else if (d >= static_cast<double>(std::numeric_limits<To>::max()))
        out[i] = std::numeric_limits<To>::max();
      else out[i] = static_cast<To>(d);
    } else if constexpr (std::is_same_v<To, F16> || std::is_same_v<To, BF16>) {
      out[i] = To(static_cast<float>(in[i]));
    } else {
      out[i] = static_cast<To>(in[i]);
    }
  }
}

void cast(const Value& x, Outputs& out) {
  const int32_t to = out.dtype(0);
  uint8_t* o = out.make(0, x.shape);
  const int64_t n = x.numel();
  auto from_type = [&](auto* tag) {
    using From = std::remove_pointer_t<decltype(tag)>;
    const From* in = x.as<From>();
    switch (to) {
      case COLLAGE_DTYPE_F32: convert(in, reinterpret_cast<float*>(o), n); return;
      case COLLAGE_DTYPE_F64: convert(in, reinterpret_cast<double*>(o), n); return;
      case COLLAGE_DTYPE_F16: convert(in, reinterpret_cast<F16*>(o), n); return;
      case COLLAGE_DTYPE_BF16: convert(in, reinterpret_cast<BF16*>(o), n); return;
      case COLLAGE_DTYPE_I64: convert(in, reinterpret_cast<int64_t*>(o), n); return;
      case COLLAGE_DTYPE_I32: convert(in, reinterpret_cast<int32_t*>(o), n); return;
      case COLLAGE_DTYPE_I8: convert(in, reinterpret_cast<int8_t*>(o), n); return;
      case COLLAGE_DTYPE_BOOL: convert(in, o, n); return;
      default: throw KernelError("cannot cast to " + type_text(to, {}));
    }
  };
  switch (x.dtype) {
    case COLLAGE_DTYPE_F32: from_type(static_cast<float*>(nullptr)); return;
    case COLLAGE_DTYPE_F64: from_type(static_cast<double*>(nullptr)); return;
    case COLLAGE_DTYPE_F16: from_type(static_cast<F16*>(nullptr)); return;
    case COLLAGE_DTYPE_BF16: from_type(static_cast<BF16*>(nullptr)); return;
    case COLLAGE_DTYPE_I64: from_type(static_cast<int64_t*>(nullptr)); return;
    case COLLAGE_DTYPE_I32: from_type(static_cast<int32_t*>(nullptr)); return;
    case COLLAGE_DTYPE_I8: from_type(static_cast<int8_t*>(nullptr)); return;
    case COLLAGE_DTYPE_BOOL: from_type(static_cast<uint8_t*>(nullptr)); return;
    default: throw KernelError("cannot cast from " + type_text(x.dtype, x.shape));
  }
}

}  // namespace

bool run_layout_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  switch (p.op) {
    case DynOp::gather: gather(p, in[0], in[1], out); return true;
    case DynOp::gather_elements: gather_elements(p, in[0], in[1], out); return true;
    case DynOp::slice: slice(p, in[0], out); return true;
    case DynOp::squeeze: squeeze(p, in[0], out); return true;
    case DynOp::unsqueeze: unsqueeze(p, in[0], out); return true;
    case DynOp::reshape: reshape(p, in[0], out); return true;
    case DynOp::transpose: transpose(p, in[0], out); return true;
    case DynOp::concat: concat(p, in, out); return true;
    case DynOp::cast: cast(in[0], out); return true;
    case DynOp::identity: copy_all(in[0], out, in[0].shape); return true;
    default: return false;
  }
}

}  // namespace collage::rt_dynamic
