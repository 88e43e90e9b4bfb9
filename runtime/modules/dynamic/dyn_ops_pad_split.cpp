// Pad and Split in the dynamic module, for pads, axes, a pad value or split sizes computed at run
// time (or inputs whose shapes are known only now). ONNX semantics, as the reference kernels of
// lib/ops define them: negative pads crop first, reflect/edge/wrap read the cropped tensor.
#include <algorithm>
#include <cstring>

#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

enum PadMode : int64_t { kConstant = 0, kReflect, kEdge, kWrap };

// Pads of every axis: `pads` as given, or spread from `axes`.
std::vector<int64_t> full_pads(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                               int64_t rank) {
  if (axes.empty()) {
    if (static_cast<int64_t>(pads.size()) != 2 * rank)
      throw KernelError("pads " + list_text(pads) + " has " + std::to_string(pads.size()) +
                        " entries, expected 2 * rank = " + std::to_string(2 * rank));
    return pads;
  }
  const auto k = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * k)
    throw KernelError("pads " + list_text(pads) + " has " + std::to_string(pads.size()) +
                      " entries for the " + std::to_string(k) + " axes " + list_text(axes));
  std::vector<int64_t> full(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = axis_in(axes[i], rank, "axis");
    if (seen[d]) throw KernelError("axis " + std::to_string(axes[i]) + " is listed twice");
    seen[d] = true;
    full[d] = pads[i];
    full[d + rank] = pads[i + k];
  }
  return full;
}

int64_t reflect_index(int64_t i, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

// lists: pads, the pad value's bytes (one little-endian i64; empty: zero), axes, [mode]. A value
// computed at run time is operand list_sources[1], of the data's type.
void pad(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  const Value& x = in[0];
  const auto rank = static_cast<int64_t>(x.shape.size());
  const std::vector<int64_t> pads = full_pads(p.list(0), p.list(2), rank);
  const int64_t mode = p.value(3, kConstant);
  if (mode < kConstant || mode > kWrap) throw KernelError("unknown pad mode");
  const size_t esize = element_size(x.dtype);
  uint8_t value[8] = {};
  if (p.list_sources.size() > 1 && p.list_sources[1] >= 0) {
    const Value& v = in[p.list_sources[1]];
    if (v.dtype != x.dtype || v.numel() > 1)
      throw KernelError("constant_value is " + type_text(v.dtype, v.shape) +
                        "; expected one value of the data's type");
    if (v.numel() == 1) std::memcpy(value, v.data, esize);
  } else if (!p.list(1).empty()) {
    const auto bits = static_cast<uint64_t>(p.list(1)[0]);
    for (size_t i = 0; i < esize; ++i) value[i] = static_cast<uint8_t>(bits >> (8 * i));
  }
  // Per axis, the input offset (elements) each output position reads, -1 for the fill value.
  const std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<int64_t> shape(rank);
  std::vector<std::vector<int64_t>> table(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t b = pads[d], e = pads[d + rank];
    const int64_t crop_begin = std::max<int64_t>(0, -b);
    const int64_t crop = crop_begin + std::max<int64_t>(0, -e);
    if (crop > x.shape[d])
      throw KernelError("pads " + list_text(p.list(0)) + " crop " + std::to_string(crop) +
                        " elements from axis " + std::to_string(d) + " of size " +
                        std::to_string(x.shape[d]));
    const int64_t kept = x.shape[d] - crop, before = std::max<int64_t>(0, b);
    shape[d] = before + kept + std::max<int64_t>(0, e);
    if (mode != kConstant && kept == 0 && shape[d] > 0)
      throw KernelError("cannot pad axis " + std::to_string(d) +
                        ", which is empty, except with "
                        "mode constant");
    table[d].resize(static_cast<size_t>(shape[d]));
    for (int64_t o = 0; o < shape[d]; ++o) {
      const int64_t i = o - before;
      int64_t j = i;
      if (i < 0 || i >= kept) {
        if (mode == kConstant) {
          table[d][o] = -1;
          continue;
        }
        j = mode == kEdge   ? std::clamp<int64_t>(i, 0, kept - 1)
            : mode == kWrap ? (i % kept + kept) % kept
                            : reflect_index(i, kept);
      }
      table[d][o] = (crop_begin + j) * strides[d];
    }
  }
  uint8_t* o = out.make(0, shape);
  const int64_t n = numel(shape);
  std::vector<int64_t> index(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank && at >= 0; ++d) {
      const int64_t t = table[d][index[d]];
      at = t < 0 ? -1 : at + t;
    }
    std::memcpy(o + k * esize, at < 0 ? value : x.data + at * esize, esize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// lists: split (empty: as many equal pieces as outputs, the last smaller), [axis].
void split(const DynParams& p, const Value& x, Outputs& out) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = axis_in(p.value(1, 0), rank, "axis");
  const int64_t dim = x.shape[axis];
  const auto pieces = static_cast<int64_t>(out.count());
  std::vector<int64_t> sizes = p.list(0);
  if (!sizes.empty()) {
    if (static_cast<int64_t>(sizes.size()) != pieces)
      throw KernelError("split " + list_text(sizes) + " has " + std::to_string(sizes.size()) +
                        " entries for " + std::to_string(pieces) + " outputs");
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) throw KernelError("split " + list_text(sizes) + " has a negative size");
      sum += s;
    }
    if (sum != dim)
      throw KernelError("split " + list_text(sizes) + " sums to " + std::to_string(sum) +
                        ", but axis " + std::to_string(axis) + " has size " + std::to_string(dim));
  } else {
    const int64_t chunk = (dim + pieces - 1) / pieces;
    const int64_t last = dim - chunk * (pieces - 1);
    if (last < 0)
      throw KernelError("cannot split axis " + std::to_string(axis) + " of size " +
                        std::to_string(dim) + " into " + std::to_string(pieces) + " pieces");
    sizes.assign(static_cast<size_t>(pieces), chunk);
    sizes.back() = last;
  }
  int64_t outer = 1, inner = static_cast<int64_t>(element_size(x.dtype));
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x.shape[d];
    if (d > axis) inner *= x.shape[d];
  }
  int64_t at = 0;
  for (int64_t k = 0; k < pieces; ++k) {
    std::vector<int64_t> shape = x.shape;
    shape[axis] = sizes[k];
    uint8_t* o = out.make(static_cast<size_t>(k), shape);
    const int64_t block = sizes[k] * inner;
    for (int64_t b = 0; b < outer; ++b)
      if (block) std::memcpy(o + b * block, x.data + b * dim * inner + at, block);
    at += block;
  }
}

}  // namespace

bool run_pad_split_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  switch (p.op) {
    case DynOp::pad:
      pad(p, in, out);
      return true;
    case DynOp::split:
      split(p, in[0], out);
      return true;
    default:
      return false;
  }
}

}  // namespace collage::rt_dynamic
