// Reductions over any set of axes: ReduceSum, ReduceMean, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp (float sums accumulate in double) and ReduceMax,
// ReduceMin (NaN propagates; an empty reduction gives -inf / +inf, or the integer limit). An
// empty reduction gives each operation's identity (0, 1, -inf for the logarithms).
#include <cstring>
#include <limits>
#include <memory>

#include "collage/ops/elementwise.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

constexpr TypeSet kSumTypes = kFloatTypes | type_bit(DType::i32) | type_bit(DType::i64) |
                             type_bit(DType::u32) | type_bit(DType::u64);
// ReduceMax and ReduceMin also take bool from version 20 and 8-bit integers from 12.
constexpr TypeSet kMinMaxTypes = kNumericTypes | type_bit(DType::boolean);

// Which axes of a rank-`rank` input are reduced; all false when nothing is (empty axes with
// noop_with_empty_axes). Errors are bare messages for the caller to prefix.
absl::StatusOr<std::vector<bool>> reduced_axes(const ReduceAttrs& a, int64_t rank) {
  std::vector<bool> mask(static_cast<size_t>(rank), false);
  if (a.axes.empty()) {
    if (!a.noop_with_empty_axes) mask.assign(mask.size(), true);
    return mask;
  }
  for (int64_t axis : a.axes) {
    std::optional<int64_t> d = normalize_axis(axis, rank);
    if (!d)
      return absl::InvalidArgumentError(
          str_cat("axis ", axis, " is out of range for input rank ", rank));
    if (mask[*d])
      return absl::InvalidArgumentError(
          str_cat("axis ", axis, " appears twice in axes ", list_to_string(a.axes)));
    mask[*d] = true;
  }
  return mask;
}

template <TypeSet Allowed>
absl::Status infer_reduce(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, Allowed); !s.ok()) return s;
  const ReduceAttrs& a = ctx.attrs<ReduceAttrs>();
  const Shape& in = ctx.input(0).shape;
  absl::StatusOr<std::vector<bool>> mask = reduced_axes(a, static_cast<int64_t>(in.size()));
  if (!mask.ok()) return ctx.error(str_cat(mask.status().message()));
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!(*mask)[d]) {
      out.push_back(in[d]);
    } else if (a.keepdims) {
      out.push_back(1);
    }
  }
  ctx.set_output(0, TensorType{ctx.input(0).dtype, std::move(out)});
  return absl::OkStatus();
}

// Reducers: an accumulator type, its start value, how two accumulators combine and how the
// final value is formed from the accumulator and the number of reduced elements.
template <typename T>
struct SumReducer {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  static Acc init() { return 0; }
  static Acc lift(T x) { return static_cast<Acc>(x); }
  static Acc combine(Acc a, Acc b) { return wrap_add(a, b); }
  static T finish(Acc a, int64_t) { return static_cast<T>(a); }
};

template <typename T>
struct MeanReducer : SumReducer<T> {
  using Acc = typename SumReducer<T>::Acc;
  static T finish(Acc a, int64_t count) {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(a / static_cast<double>(count));  // NaN for an empty reduction
    } else {
      return count ? static_cast<T>(a / count) : T(0);
    }
  }
};

template <typename T>
struct MaxReducer {
  using Acc = T;
  static Acc init() {
    if constexpr (std::is_floating_point_v<T>) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  static Acc lift(T x) { return x; }
  static Acc combine(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(b)) return b;
    }
    return b > a ? b : a;
  }
  static T finish(Acc a, int64_t) { return a; }
};

template <typename T>
struct MinReducer {
  using Acc = T;
  static Acc init() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  static Acc lift(T x) { return x; }
  static Acc combine(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(b)) return b;
    }
    return b < a ? b : a;
  }
  static T finish(Acc a, int64_t) { return a; }
};

template <typename T>
struct ProdReducer {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  static Acc init() { return 1; }
  static Acc lift(T x) { return static_cast<Acc>(x); }
  static Acc combine(Acc a, Acc b) { return wrap_mul(a, b); }
  static T finish(Acc a, int64_t) { return static_cast<T>(a); }
};

// Sum of g(x) for a per-element g, then h of the sum. h's double result reaches an integer T
// through convert_value: a wrapped (negative) integer sum has a NaN root or logarithm, and an
// exp sum can be infinite, which a plain cast would make undefined (found by the onnx fuzzer).
template <typename T>
struct L1Reducer : SumReducer<T> {
  using Acc = typename SumReducer<T>::Acc;
  static Acc lift(T x) {
    const Acc v = static_cast<Acc>(x);
    return v < Acc(0) ? wrap_sub(Acc(0), v) : v;
  }
};
template <typename T>
struct SumSquareReducer : SumReducer<T> {
  using Acc = typename SumReducer<T>::Acc;
  static Acc lift(T x) { return wrap_mul(static_cast<Acc>(x), static_cast<Acc>(x)); }
};
template <typename T>
struct L2Reducer : SumSquareReducer<T> {
  using Acc = typename SumReducer<T>::Acc;
  static T finish(Acc a, int64_t) {
    return convert_value<T>(std::sqrt(static_cast<double>(a)));
  }
};
template <typename T>
struct LogSumReducer : SumReducer<T> {
  using Acc = typename SumReducer<T>::Acc;
  static T finish(Acc a, int64_t) {
    return convert_value<T>(std::log(static_cast<double>(a)));
  }
};
template <typename T>
struct LogSumExpReducer {
  using Acc = double;
  static Acc init() { return 0; }
  static Acc lift(T x) { return std::exp(static_cast<double>(x)); }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static T finish(Acc a, int64_t) { return convert_value<T>(std::log(a)); }
};

// Reduces a contiguous row with four independent accumulators, so float sums do not wait on
// each other and round a little less.
template <typename R, typename C>
typename R::Acc reduce_row(const typename C::Storage* x, int64_t n) {
  typename R::Acc s0 = R::init(), s1 = R::init(), s2 = R::init(), s3 = R::init();
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    s0 = R::combine(s0, R::lift(C::load(x[j])));
    s1 = R::combine(s1, R::lift(C::load(x[j + 1])));
    s2 = R::combine(s2, R::lift(C::load(x[j + 2])));
    s3 = R::combine(s3, R::lift(C::load(x[j + 3])));
  }
  for (; j < n; ++j) s0 = R::combine(s0, R::lift(C::load(x[j])));
  return R::combine(R::combine(s0, s1), R::combine(s2, s3));
}

// Walks the input in memory order; the accumulator is read as the input broadcast from the
// kept shape, so a row either folds into one accumulator or adds into a row of them.
template <template <typename> class Reducer, typename C>
void reduce_loop(const Tensor& in, const std::vector<bool>& mask, Tensor& out) {
  using R = Reducer<typename C::Compute>;
  const Shape& shape = in.shape();
  Shape kept = shape;
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (mask[d]) {
      kept[d] = 1;
      count *= shape[d];
    }
  }
  // Not std::vector: bool accumulators (ReduceMax of bool) must be addressable.
  const auto size = static_cast<size_t>(out.numel());
  std::unique_ptr<typename R::Acc[]> acc(new typename R::Acc[size]);
  std::fill(acc.get(), acc.get() + size, R::init());
  const auto plan = plan_broadcast<2>({&shape, &kept}, shape);
  const auto* x = in.data<typename C::Storage>();
  const bool fold = plan.inner_stride(1) == 0;
  for_each_row(plan, [&](const std::array<int64_t, 2>& off, int64_t, int64_t n) {
    const auto* row = x + off[0];
    auto* a = acc.get() + off[1];
    if (fold) {
      *a = R::combine(*a, reduce_row<R, C>(row, n));
    } else {
      for (int64_t j = 0; j < n; ++j) a[j] = R::combine(a[j], R::lift(C::load(row[j])));
    }
  });
  auto* y = out.data<typename C::Storage>();
  for (size_t i = 0; i < size; ++i) y[i] = C::store(R::finish(acc[i], count));
}

template <TypeSet Allowed, template <typename> class Reducer>
absl::Status reduce_kernel(const KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  Tensor& out = args.outputs[0];
  absl::StatusOr<std::vector<bool>> mask = reduced_axes(args.get<ReduceAttrs>(), in.rank());
  if (!mask.ok()) return mask.status();
  if (std::find(mask->begin(), mask->end(), true) == mask->end()) {
    if (in.bytes() > 0) std::memcpy(out.raw(), in.raw(), in.bytes());
    return absl::OkStatus();
  }
  return dispatch_codec<Allowed>(
      in.dtype(), [&](auto codec) { reduce_loop<Reducer, decltype(codec)>(in, *mask, out); });
}

template <TypeSet Allowed, template <typename> class Reducer>
OpDef reduce_op(std::string name) {
  return make_op<ReduceAttrs>(std::move(name), FusionKind::reduction, 1, 1, infer_reduce<Allowed>,
                              reduce_kernel<Allowed, Reducer>);
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  add_builtin_op(r, reduce_op<kSumTypes, SumReducer>("ReduceSum"));
  add_builtin_op(r, reduce_op<kSumTypes, MeanReducer>("ReduceMean"));
  add_builtin_op(r, reduce_op<kMinMaxTypes, MaxReducer>("ReduceMax"));
  add_builtin_op(r, reduce_op<kMinMaxTypes, MinReducer>("ReduceMin"));
  add_builtin_op(r, reduce_op<kSumTypes, ProdReducer>("ReduceProd"));
  add_builtin_op(r, reduce_op<kSumTypes, L1Reducer>("ReduceL1"));
  add_builtin_op(r, reduce_op<kSumTypes, L2Reducer>("ReduceL2"));
  add_builtin_op(r, reduce_op<kSumTypes, SumSquareReducer>("ReduceSumSquare"));
  add_builtin_op(r, reduce_op<kSumTypes, LogSumReducer>("ReduceLogSum"));
  add_builtin_op(r, reduce_op<kSumTypes, LogSumExpReducer>("ReduceLogSumExp"));
}

}  // namespace collage::ops
