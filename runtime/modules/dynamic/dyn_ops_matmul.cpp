// MatMul in the dynamic module, for operands whose shapes are known only at run time (a grid
// built from sizes read at run time, as AffineGrid's expansion makes): numpy's matmul (a 1-D
// operand gains an axis that the result drops again, batch axes broadcast), on f32 (summed in
// float, as native's MatMul) and f64. Gemm (alpha * A' * B' + beta * C, C broadcast to the
// result, A' and B' transposed by transA and transB) on f32 and f64, as the reference computes
// it (lib/ops/gemm_ref.cpp: products summed in the element type, then scaled).
#include <algorithm>
#include <cstring>

#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

template <typename T>
void matmul(const Value& a, const Value& b, Outputs& out) {
  const bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
  // Both as [batch..., rows, cols].
  std::vector<int64_t> as = a.shape, bs = b.shape;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    throw KernelError("inner dimensions of " + type_text(a.dtype, a.shape) + " and " +
                      type_text(b.dtype, b.shape) + " differ");
  const size_t batch_rank = std::max(as.size(), bs.size()) - 2;
  std::vector<int64_t> batch(batch_rank);
  for (size_t i = 0; i < batch_rank; ++i) {
    const size_t back = batch_rank - i;  // axes from the matrices' end
    const int64_t da = as.size() - 2 >= back ? as[as.size() - 2 - back] : 1;
    const int64_t db = bs.size() - 2 >= back ? bs[bs.size() - 2 - back] : 1;
    if (da != db && da != 1 && db != 1)
      throw KernelError("batch axes of " + type_text(a.dtype, a.shape) + " and " +
                        type_text(b.dtype, b.shape) + " do not broadcast");
    batch[i] = da == 1 ? db : da;
  }
  std::vector<int64_t> shape = batch;
  if (!a_vec) shape.push_back(m);
  if (!b_vec) shape.push_back(n);
  T* y = out.make_as<T>(0, shape);
  const int64_t batches = numel(batch);
  // Each operand's matrix offset for batch index `flat`: its own axes, 1s broadcast.
  auto offset = [&](const std::vector<int64_t>& s, int64_t flat) {
    const size_t own = s.size() - 2;
    int64_t off = 0, stride = s[own] * s[own + 1];
    for (size_t i = batch_rank; i-- > 0;) {
      const int64_t idx = flat % batch[i];
      flat /= batch[i];
      const size_t back = batch_rank - i;
      if (own >= back) {
        const int64_t dim = s[own - back];
        off += (dim == 1 ? 0 : idx) * stride;
        stride *= dim;
      }
    }
    return off;
  };
  for (int64_t bi = 0; bi < batches; ++bi) {
    const T* pa = a.as<T>() + offset(as, bi);
    const T* pb = b.as<T>() + offset(bs, bi);
    T* py = y + bi * m * n;
    std::fill(py, py + m * n, T(0));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t r = 0; r < k; ++r) {
        const T v = pa[i * k + r];
        for (int64_t j = 0; j < n; ++j) py[i * n + j] += v * pb[r * n + j];
      }
  }
}

float f32_of_bits(int64_t bits) {
  const auto u = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

template <typename T>
void gemm(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  const Value &a = in[0], &b = in[1];
  if (a.shape.size() != 2 || b.shape.size() != 2)
    throw KernelError("operands " + type_text(a.dtype, a.shape) + " and " +
                      type_text(b.dtype, b.shape) + " must be matrices");
  const bool ta = p.value(0, 0) != 0, tb = p.value(1, 0) != 0;
  const T alpha = static_cast<T>(f32_of_bits(p.value(2, 0x3f800000)));
  const T beta = static_cast<T>(f32_of_bits(p.value(3, 0x3f800000)));
  const int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  const int64_t n = tb ? b.shape[0] : b.shape[1];
  if ((tb ? b.shape[1] : b.shape[0]) != k)
    throw KernelError("inner dimensions of " + type_text(a.dtype, a.shape) + " and " +
                      type_text(b.dtype, b.shape) + " differ");
  T* y = out.make_as<T>(0, {m, n});
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T acc = 0;
      for (int64_t r = 0; r < k; ++r)
        acc += pa[ta ? r * m + i : i * k + r] * pb[tb ? j * k + r : r * n + j];
      y[i * n + j] = alpha * acc;
    }
  if (in.size() < 3 || !in[2].data) return;
  const Value& c = in[2];
  if (c.dtype != a.dtype || c.shape.size() > 2)
    throw KernelError("C " + type_text(c.dtype, c.shape) + " does not fit");
  const int64_t cr = c.shape.size() == 2 ? c.shape[0] : 1;
  const int64_t cc = c.shape.empty() ? 1 : c.shape.back();
  if ((cr != 1 && cr != m) || (cc != 1 && cc != n))
    throw KernelError("C " + type_text(c.dtype, c.shape) + " does not broadcast to " +
                      type_text(a.dtype, {m, n}));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      y[i * n + j] += beta * c.as<T>()[(cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j)];
}

}  // namespace

bool run_matmul_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  if (p.op == DynOp::gemm) {
    if (in[0].dtype != in[1].dtype)
      throw KernelError("operands " + type_text(in[0].dtype, in[0].shape) + " and " +
                        type_text(in[1].dtype, in[1].shape) + " differ in type");
    if (in[0].dtype == COLLAGE_DTYPE_F32)
      gemm<float>(p, in, out);
    else if (in[0].dtype == COLLAGE_DTYPE_F64)
      gemm<double>(p, in, out);
    else
      throw KernelError("operands " + type_text(in[0].dtype, in[0].shape) +
                        " are not f32 or f64");
    return true;
  }
  if (p.op != DynOp::matmul) return false;
  const Value &a = in[0], &b = in[1];
  if (a.dtype != b.dtype || a.shape.empty() || b.shape.empty())
    throw KernelError("operands " + type_text(a.dtype, a.shape) + " and " +
                      type_text(b.dtype, b.shape) + " must be of one type and rank >= 1");
  if (a.dtype == COLLAGE_DTYPE_F32)
    matmul<float>(a, b, out);
  else if (a.dtype == COLLAGE_DTYPE_F64)
    matmul<double>(a, b, out);
  else
    throw KernelError("operands " + type_text(a.dtype, a.shape) + " are not f32 or f64");
  return true;
}

}  // namespace collage::rt_dynamic
