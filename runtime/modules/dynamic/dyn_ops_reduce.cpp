// Reductions in the dynamic module: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp on f32, f64, f16, bf16,
// i32 and i64 (Max and Min on bool too; 16-bit results rounded once from the double sum through
// float, as the reference rounds them), over
// axes known only at run time. ONNX semantics as the reference kernels (lib/ops/reduction.cpp)
// define them: float sums accumulate in double, NaN propagates through Max and Min, an empty
// reduction gives the operation's identity, integer arithmetic wraps. ArgMax (lists: [axis],
// [keepdims], [select_last_index]) gives the first (or last) index of the largest value; NaN
// never compares larger (lib/ops/tree_argmax.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "dyn_half.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

// Which axes are reduced (lists: axes, [keepdims], [noop_with_empty_axes]) and the output shape.
struct ReducePlan {
  std::vector<bool> reduced;
  std::vector<int64_t> shape;
};

ReducePlan plan_of(const DynParams& p, const std::vector<int64_t>& in) {
  const auto rank = static_cast<int64_t>(in.size());
  const std::vector<int64_t>& axes = p.list(0);
  ReducePlan plan;
  plan.reduced.assign(in.size(), axes.empty() && p.value(2, 0) == 0);
  for (int64_t a : axes) {
    const int64_t d = axis_in(a, rank, "axis");
    if (plan.reduced[d]) throw KernelError("axis " + std::to_string(a) + " appears twice in axes");
    plan.reduced[d] = true;
  }
  const bool keep = p.value(1, 1) != 0;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!plan.reduced[d]) plan.shape.push_back(in[d]);
    else if (keep) plan.shape.push_back(1);
  }
  return plan;
}

template <typename T>
void reduce(DynOp op, const Value& x, const ReducePlan& plan, Outputs& out) {
  using Acc = std::conditional_t<kFloatElement<T>, double, int64_t>;
  const auto rank = static_cast<int64_t>(x.shape.size());
  // Output strides over the input's dimensions: 0 for a reduced one.
  std::vector<int64_t> ostride(rank, 0);
  int64_t step = 1, count = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (plan.reduced[d]) {
      count *= x.shape[d];
      continue;
    }
    ostride[d] = step;
    step *= x.shape[d];
  }
  Acc init = 0;
  if (op == DynOp::reduce_prod) init = 1;
  if (op == DynOp::reduce_max)
    init = kFloatElement<T> ? -std::numeric_limits<Acc>::infinity()
                            : static_cast<Acc>(std::numeric_limits<T>::lowest());
  if (op == DynOp::reduce_min)
    init = kFloatElement<T> ? std::numeric_limits<Acc>::infinity()
                            : static_cast<Acc>(std::numeric_limits<T>::max());
  std::vector<Acc> acc(static_cast<size_t>(step), init);
  auto wrap = [](auto a, auto b, auto f) -> Acc {
    if constexpr (kFloatElement<T>) {
      return f(a, b);
    } else {
      return static_cast<Acc>(f(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
    }
  };
  const T* in = x.as<T>();
  std::vector<int64_t> index(rank, 0);
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d) o += index[d] * ostride[d];
    Acc& a = acc[o];
    const Acc v = static_cast<Acc>(in[i]);
    switch (op) {
      case DynOp::reduce_max:
        if constexpr (kFloatElement<T>) {
          if (std::isnan(v) || std::isnan(a)) { a = std::isnan(a) ? a : v; break; }
        }
        a = v > a ? v : a;
        break;
      case DynOp::reduce_min:
        if constexpr (kFloatElement<T>) {
          if (std::isnan(v) || std::isnan(a)) { a = std::isnan(a) ? a : v; break; }
        }
        a = v < a ? v : a;
        break;
      case DynOp::reduce_prod: a = wrap(a, v, [](auto p, auto q) { return p * q; }); break;
      case DynOp::reduce_l1:
        a = wrap(a, v < 0 ? wrap(0, v, [](auto p, auto q) { return p - q; }) : v,
                 [](auto p, auto q) { return p + q; });
        break;
      case DynOp::reduce_l2:
      case DynOp::reduce_sum_square:
        a = wrap(a, wrap(v, v, [](auto p, auto q) { return p * q; }),
                 [](auto p, auto q) { return p + q; });
        break;
      case DynOp::reduce_log_sum_exp:
        if constexpr (kFloatElement<T>) {
          a += std::exp(v);
        } else {
          throw KernelError("ReduceLogSumExp takes f32 here");
        }
        break;
      default: a = wrap(a, v, [](auto p, auto q) { return p + q; }); break;
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < x.shape[d]) break;
      index[d] = 0;
    }
  }
  T* o = out.make_as<T>(0, plan.shape);
  for (size_t k = 0; k < acc.size(); ++k) {
    const Acc a = acc[k];
    switch (op) {
      case DynOp::reduce_mean:
        if constexpr (kFloatElement<T>) {
          o[k] = static_cast<T>(a / static_cast<double>(count));
        } else {
          o[k] = count ? static_cast<T>(a / count) : T(0);
        }
        break;
      case DynOp::reduce_l2: o[k] = static_cast<T>(std::sqrt(static_cast<double>(a))); break;
      case DynOp::reduce_log_sum:
      case DynOp::reduce_log_sum_exp: o[k] = static_cast<T>(std::log(static_cast<double>(a))); break;
      default: o[k] = static_cast<T>(a); break;
    }
  }
}

template <typename T>
void arg_max(const DynParams& p, const Value& x, Outputs& out) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = axis_in(p.value(0, 0), std::max<int64_t>(rank, 1), "axis");
  if (rank == 0) throw KernelError("ArgMax of a scalar");
  const int64_t n = x.shape[axis];
  if (n == 0) throw KernelError("ArgMax over an empty axis");
  int64_t outer = 1, inner = 1;
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x.shape[d];
    if (d > axis) inner *= x.shape[d];
    if (d != axis) shape.push_back(x.shape[d]);
    else if (p.value(1, 1) != 0) shape.push_back(1);
  }
  const bool last = p.value(2, 0) != 0;
  int64_t* o = out.make_as<int64_t>(0, shape);
  const T* in = x.as<T>();
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t b = 0; b < inner; ++b) {
      const T* row = in + a * n * inner + b;
      int64_t best = 0;
      for (int64_t k = 1; k < n; ++k) {
        const T v = row[k * inner], m = row[best * inner];
        if (v > m || (last && v == m)) best = k;
      }
      o[a * inner + b] = best;
    }
}

}  // namespace

bool run_reduce_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  if (p.op == DynOp::arg_max) {
    switch (in[0].dtype) {
      case COLLAGE_DTYPE_F32: arg_max<float>(p, in[0], out); break;
      case COLLAGE_DTYPE_F64: arg_max<double>(p, in[0], out); break;
      case COLLAGE_DTYPE_I32: arg_max<int32_t>(p, in[0], out); break;
      case COLLAGE_DTYPE_I64: arg_max<int64_t>(p, in[0], out); break;
      default:
        throw KernelError("ArgMax takes f32, f64, i32 or i64 here, not " +
                          type_text(in[0].dtype, in[0].shape));
    }
    return true;
  }
  if (p.op < DynOp::reduce_sum || p.op > DynOp::reduce_log_sum_exp) return false;
  const Value& x = in[0];
  const ReducePlan plan = plan_of(p, x.shape);
  switch (x.dtype) {
    case COLLAGE_DTYPE_F32: reduce<float>(p.op, x, plan, out); break;
    case COLLAGE_DTYPE_F64: reduce<double>(p.op, x, plan, out); break;
    case COLLAGE_DTYPE_F16: reduce<F16>(p.op, x, plan, out); break;
    case COLLAGE_DTYPE_BF16: reduce<BF16>(p.op, x, plan, out); break;
    case COLLAGE_DTYPE_I32: reduce<int32_t>(p.op, x, plan, out); break;
    case COLLAGE_DTYPE_I64: reduce<int64_t>(p.op, x, plan, out); break;
    case COLLAGE_DTYPE_BOOL:
      if (p.op != DynOp::reduce_max && p.op != DynOp::reduce_min)
        throw KernelError(std::string(dyn_op_name(p.op)) + " does not take bool");
      reduce<bool>(p.op, x, plan, out);
      break;
    default:
      throw KernelError(std::string(dyn_op_name(p.op)) +
                        " takes f32, f64, f16, bf16, i32, i64 or bool here, not " +
                        type_text(x.dtype, x.shape));
  }
  return true;
}

}  // namespace collage::rt_dynamic
