// TopK in the dynamic module, for a k known only at run time (lists: k, [axis], [largest],
// [sorted]) on f32, i32 and i64. The same order as the reference kernel (lib/ops/tensor_topk.cpp):
// from the largest (smallest) down, equal values by index, NaN above every number; the result is
// always sorted.
#include "dyn_top_k.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

template <typename T>
void top_k(const Value& x, int64_t axis, int64_t k, bool largest, Outputs& out) {
  std::vector<int64_t> shape = x.shape;
  shape[axis] = k;
  T* values = out.make_as<T>(0, shape);
  auto* indices = out.make_as<int64_t>(1, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t len = x.shape[axis];
  std::vector<T> row(static_cast<size_t>(len));
  std::vector<int64_t> order;
  const T* in = x.as<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < len; ++j) row[j] = in[(o * len + j) * inner + i];
      top_k_order(row, k, largest, order);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * inner + i;
        values[at] = row[order[j]];
        indices[at] = order[j];
      }
    }
  }
}

}  // namespace

bool run_sort_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  if (p.op != DynOp::top_k) return false;
  const Value& x = in[0];
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) throw KernelError("X must have rank >= 1, got a scalar");
  const int64_t axis = axis_in(p.value(1, -1), rank, "axis");
  if (p.list(0).size() != 1)
    throw KernelError("K must hold one value, it holds " + std::to_string(p.list(0).size()));
  const int64_t k = p.list(0)[0];
  if (k < 0 || k > x.shape[axis])
    throw KernelError("k = " + std::to_string(k) + " is outside [0, " +
                      std::to_string(x.shape[axis]) + "] (axis " + std::to_string(axis) + " of " +
                      type_text(x.dtype, x.shape) + ")");
  const bool largest = p.value(2, 1) != 0;
  switch (x.dtype) {
    case COLLAGE_DTYPE_F32: top_k<float>(x, axis, k, largest, out); break;
    case COLLAGE_DTYPE_I32: top_k<int32_t>(x, axis, k, largest, out); break;
    case COLLAGE_DTYPE_I64: top_k<int64_t>(x, axis, k, largest, out); break;
    default:
      throw KernelError("TopK takes f32, i32 or i64 here, not " + type_text(x.dtype, x.shape));
  }
  return true;
}

}  // namespace collage::rt_dynamic
