// CumSum, CumProd, ScatterND and ScatterElements in the dynamic module, in linear time: a scan
// runs once along its axis (the axis read at run time), a running value per position of the
// other axes, those positions split between tasks; a scatter copies its data and applies the
// updates in order, so that a later duplicate index combines with (or, reduction none, replaces)
// an earlier one, as the reference kernels (lib/ops/tensor_index.cpp) do. Integer arithmetic
// wraps; max/min keep the current value unless the update compares greater/less (NaN updates
// are dropped, a NaN already there stays), like the reference.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

// Positions along the other axes that one unit of scan work runs side by side.
constexpr int64_t kScanBlock = 256;

template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a + b;
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  }
}

template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a * b;
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
}

// Calls f(T{}) with the C++ type of `dtype`; throws for one the scans and scatters do not run.
template <typename F>
void dispatch(int32_t dtype, F&& f) {
  switch (dtype) {
    case COLLAGE_DTYPE_F32: return f(float{});
    case COLLAGE_DTYPE_F64: return f(double{});
    case COLLAGE_DTYPE_I32: return f(int32_t{});
    case COLLAGE_DTYPE_I64: return f(int64_t{});
    case COLLAGE_DTYPE_U32: return f(uint32_t{});
    case COLLAGE_DTYPE_U64: return f(uint64_t{});
    default:
      throw KernelError("element type " + type_text(dtype, {}) +
                        " is not supported (f32, f64, i32, i64, u32, u64)");
  }
}

// The scan's geometry for input shape `shape` and the axis operand `axis`.
struct ScanShape {
  int64_t outer = 1, len = 1, inner = 1, blocks = 0;
  int64_t units() const { return outer * blocks; }
};

ScanShape scan_shape(const std::vector<int64_t>& shape, const Value& axis_value) {
  if (axis_value.numel() != 1)
    throw KernelError("axis must be one integer, got " + type_text(axis_value.dtype, axis_value.shape));
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t axis = axis_in(int_at(axis_value, 0), rank, "axis");
  ScanShape s;
  for (int64_t d = 0; d < axis; ++d) s.outer *= shape[d];
  s.len = shape[axis];
  for (int64_t d = axis + 1; d < rank; ++d) s.inner *= shape[d];
  s.blocks = (s.inner + kScanBlock - 1) / kScanBlock;
  return s;
}

// Units [begin, end) of a scan: each keeps one running value per position of its block.
template <typename T, bool kProd>
void scan_units(const T* x, T* y, const ScanShape& s, bool exclusive, bool reverse,
                int64_t begin, int64_t end) {
  T acc[kScanBlock];
  for (int64_t u = begin; u < end; ++u) {
    const int64_t o = u / s.blocks, i0 = (u % s.blocks) * kScanBlock;
    const int64_t n = std::min(kScanBlock, s.inner - i0);
    std::fill(acc, acc + n, T(kProd ? 1 : 0));
    for (int64_t t = 0; t < s.len; ++t) {
      const int64_t j = reverse ? s.len - 1 - t : t;
      const int64_t at = (o * s.len + j) * s.inner + i0;
      const T* xs = x + at;
      T* ys = y + at;
      for (int64_t i = 0; i < n; ++i) {
        const T v = xs[i];
        const T before = acc[i];
        acc[i] = kProd ? wrap_mul(before, v) : wrap_add(before, v);
        ys[i] = exclusive ? before : acc[i];
      }
    }
  }
}

void run_cumulative(const DynParams& p, const std::vector<Value>& in, void* y, int32_t task,
                    int32_t tasks) {
  const Value& x = in[0];
  const ScanShape s = scan_shape(x.shape, in[1]);
  const int64_t units = s.units();
  const int64_t begin = units * task / tasks, end = units * (task + 1) / tasks;
  const bool exclusive = p.value(0, 0) != 0, reverse = p.value(1, 0) != 0;
  dispatch(x.dtype, [&](auto zero) {
    using T = decltype(zero);
    if (p.op == DynOp::cum_prod)
      scan_units<T, true>(x.as<T>(), static_cast<T*>(y), s, exclusive, reverse, begin, end);
    else
      scan_units<T, false>(x.as<T>(), static_cast<T*>(y), s, exclusive, reverse, begin, end);
  });
}

template <typename T>
T combine(T cur, T u, ScatterReduction r) {
  switch (r) {
    case ScatterReduction::add: return wrap_add(cur, u);
    case ScatterReduction::mul: return wrap_mul(cur, u);
    case ScatterReduction::max: return cur < u ? u : cur;
    case ScatterReduction::min: return u < cur ? u : cur;
    default: return u;
  }
}

ScatterReduction reduction_of(const DynParams& p) {
  const int64_t r = p.value(0, 0);
  if (r < 0 || r > static_cast<int64_t>(ScatterReduction::min))
    throw KernelError("reduction code " + std::to_string(r));
  return static_cast<ScatterReduction>(r);
}

// `v` in [-dim, dim) as an offset along axis `axis`; throws naming both otherwise.
int64_t index_in(int64_t v, int64_t axis, int64_t dim) {
  if (v < -dim || v >= dim)
    throw KernelError("index " + std::to_string(v) + " is out of range for axis " +
                      std::to_string(axis) + " of size " + std::to_string(dim));
  return v < 0 ? v + dim : v;
}

template <typename T>
void scatter_nd(const Value& data, const Value& idx, const Value& upd, ScatterReduction r, T* y) {
  if (idx.dtype != COLLAGE_DTYPE_I64 || idx.shape.empty())
    throw KernelError("indices must be i64 of rank >= 1, got " + type_text(idx.dtype, idx.shape));
  const int64_t last = idx.shape.back();
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (last < 1 || last > rank) throw KernelError("the last axis of indices must be 1 to the rank of data");
  const std::vector<int64_t> strides = strides_of(data.shape);
  int64_t slice = 1;
  for (int64_t d = last; d < rank; ++d) slice *= data.shape[d];
  const int64_t tuples = idx.numel() / last;
  if (upd.numel() != tuples * slice)
    throw KernelError("updates " + type_text(upd.dtype, upd.shape) + " do not match " +
                      std::to_string(tuples) + " slices of " + std::to_string(slice));
  const int64_t* t = idx.as<int64_t>();
  const T* u = upd.as<T>();
  for (int64_t i = 0; i < tuples; ++i) {
    int64_t off = 0;
    for (int64_t k = 0; k < last; ++k) off += index_in(t[i * last + k], k, data.shape[k]) * strides[k];
    T* ys = y + off;
    const T* us = u + i * slice;
    if (r == ScatterReduction::none) {
      std::memcpy(ys, us, static_cast<size_t>(slice) * sizeof(T));
      continue;
    }
    for (int64_t j = 0; j < slice; ++j) ys[j] = combine(ys[j], us[j], r);
  }
}

template <typename T>
void scatter_elements(const Value& data, const Value& idx, const Value& upd, ScatterReduction r,
                      int64_t given_axis, T* y) {
  const auto rank = static_cast<int64_t>(data.shape.size());
  const int64_t axis = axis_in(given_axis, rank, "axis");
  if (idx.shape != upd.shape || static_cast<int64_t>(idx.shape.size()) != rank)
    throw KernelError("indices " + type_text(idx.dtype, idx.shape) + " and updates " +
                      type_text(upd.dtype, upd.shape) + " must have one shape, of the rank of data");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idx.shape[d] > data.shape[d])
      throw KernelError("indices " + type_text(idx.dtype, idx.shape) + " reach past data " +
                        type_text(data.dtype, data.shape) + " on axis " + std::to_string(d));
  const std::vector<int64_t> ds = strides_of(data.shape);
  const T* u = upd.as<T>();
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  const int64_t n = idx.numel();
  for (int64_t e = 0; e < n; ++e) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d)
      at += (d == axis ? index_in(int_at(idx, e), axis, data.shape[axis]) : pos[d]) * ds[d];
    y[at] = combine(y[at], u[e], r);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++pos[d] < idx.shape[d]) break;
      pos[d] = 0;
    }
  }
}

void run_scatter(const DynParams& p, const std::vector<Value>& in, void* y) {
  const Value &data = in[0], &idx = in[1], &upd = in[2];
  if (upd.dtype != data.dtype)
    throw KernelError("updates " + type_text(upd.dtype, upd.shape) + " and data " +
                      type_text(data.dtype, data.shape) + " differ in element type");
  const ScatterReduction r = reduction_of(p);
  dispatch(data.dtype, [&](auto zero) {
    using T = decltype(zero);
    if (y != data.data && data.numel() > 0) std::memcpy(y, data.data, static_cast<size_t>(data.numel()) * sizeof(T));
    if (p.op == DynOp::scatter_nd)
      scatter_nd<T>(data, idx, upd, r, static_cast<T*>(y));
    else
      scatter_elements<T>(data, idx, upd, r, p.value(1, 0), static_cast<T*>(y));
  });
}

}  // namespace

int32_t scan_task_count(DynOp op, const std::vector<int64_t>& shape) {
  if (op != DynOp::cum_sum && op != DynOp::cum_prod) return 1;
  // About 64 K elements per task, at most 64 tasks: the axis (so the number of independent
  // units) is known only when the kernel runs, and a task with no unit returns at once.
  const int64_t n = numel(shape);
  return static_cast<int32_t>(std::clamp<int64_t>(n / 65536, 1, 64));
}

void run_scan_task(const DynParams& p, const std::vector<Value>& in, void* y, int32_t task,
                   int32_t tasks) {
  if (p.op == DynOp::cum_sum || p.op == DynOp::cum_prod) return run_cumulative(p, in, y, task, tasks);
  if (task != 0 || tasks != 1) throw KernelError("a scatter runs as one task");
  run_scatter(p, in, y);
}

bool run_scan_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  if (!is_scan_op(p.op)) return false;
  void* y = out.make(0, in[0].shape);
  run_scan_task(p, in, y, 0, 1);
  return true;
}

}  // namespace collage::rt_dynamic
