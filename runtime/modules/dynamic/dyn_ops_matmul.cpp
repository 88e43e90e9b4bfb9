// MatMul in the dynamic module, for operands whose shapes are known only at run time (a grid
// built from sizes read at run time, as AffineGrid's expansion makes): numpy's matmul (a 1-D
// operand gains an axis that the result drops again, batch axes broadcast), on f32 (summed in
// float, as native's MatMul) and f64.
#include <algorithm>

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

}  // namespace

bool run_matmul_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
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
