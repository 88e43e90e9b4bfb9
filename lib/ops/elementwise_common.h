// Machinery shared by the elementwise and reduction operators: dtype sets, element codecs
// (storage type <-> compute type), typed dispatch, value conversion with defined results, a
// broadcast iterator over collapsed rows, and shape inference helpers.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/dtype.h"
#include "collage/op.h"
#include "collage/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"

namespace collage::ops {

// A set of dtypes as a bit mask, so the dtypes an operator accepts are a compile-time constant.
using TypeSet = uint32_t;
constexpr TypeSet type_bit(DType t) {
  return TypeSet{1} << static_cast<unsigned>(t);
}
constexpr TypeSet kFloatTypes = type_bit(DType::f32) | type_bit(DType::f16) |
                                type_bit(DType::bf16) | type_bit(DType::f64);
constexpr TypeSet kSignedIntTypes = type_bit(DType::i8) | type_bit(DType::i16) |
                                    type_bit(DType::i32) | type_bit(DType::i64);
constexpr TypeSet kUnsignedIntTypes = type_bit(DType::u8) | type_bit(DType::u16) |
                                      type_bit(DType::u32) | type_bit(DType::u64);
constexpr TypeSet kIntTypes = kSignedIntTypes | kUnsignedIntTypes;
constexpr TypeSet kSignedNumericTypes = kFloatTypes | kSignedIntTypes;
constexpr TypeSet kNumericTypes = kFloatTypes | kIntTypes;
constexpr TypeSet kAllTypes = kNumericTypes | type_bit(DType::boolean);
constexpr bool in_set(TypeSet s, DType t) {
  return (s & type_bit(t)) != 0;
}
// "f32, f16, bf16" in DType order.
std::string type_set_to_string(TypeSet s);

// Codecs say how an element is stored and in which type it is computed: 16-bit floats compute in
// float, bool computes as bool, everything else as itself.
template <typename S>
struct DirectCodec {
  using Storage = S;
  using Compute = S;
  static S load(S v) { return v; }
  template <typename T>
  static S store(T v) {
    return static_cast<S>(v);
  }
};
struct HalfCodec {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t v) { return half_to_float(v); }
  static uint16_t store(float v) { return float_to_half(v); }
};
struct BFloat16Codec {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t v) { return bfloat16_to_float(v); }
  static uint16_t store(float v) { return float_to_bfloat16(v); }
};
struct BoolCodec {
  using Storage = uint8_t;
  using Compute = bool;
  static bool load(uint8_t v) { return v != 0; }
  static uint8_t store(bool v) { return v ? 1 : 0; }
};

// Calls f(codec); f returns void or an absl::Status.
template <typename F, typename C>
absl::Status call_codec(F& f, C codec) {
  if constexpr (std::is_void_v<std::invoke_result_t<F&, C>>) {
    f(codec);
    return absl::OkStatus();
  } else {
    return f(codec);
  }
}

// Calls f(Codec{}) for dtype t (f returns void or a Status). Only the dtypes in `Allowed` are
// instantiated; any other dtype is an InvalidArgument error (shape inference rejects those first,
// so kernels never see one).
template <TypeSet Allowed, typename F>
absl::Status dispatch_codec(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      if constexpr (in_set(Allowed, DType::f32)) return call_codec(f, DirectCodec<float>{});
      break;
    case DType::f16:
      if constexpr (in_set(Allowed, DType::f16)) return call_codec(f, HalfCodec{});
      break;
    case DType::bf16:
      if constexpr (in_set(Allowed, DType::bf16)) return call_codec(f, BFloat16Codec{});
      break;
    case DType::i8:
      if constexpr (in_set(Allowed, DType::i8)) return call_codec(f, DirectCodec<int8_t>{});
      break;
    case DType::i32:
      if constexpr (in_set(Allowed, DType::i32)) return call_codec(f, DirectCodec<int32_t>{});
      break;
    case DType::i64:
      if constexpr (in_set(Allowed, DType::i64)) return call_codec(f, DirectCodec<int64_t>{});
      break;
    case DType::boolean:
      if constexpr (in_set(Allowed, DType::boolean)) return call_codec(f, BoolCodec{});
      break;
    case DType::f64:
      if constexpr (in_set(Allowed, DType::f64)) return call_codec(f, DirectCodec<double>{});
      break;
    case DType::i16:
      if constexpr (in_set(Allowed, DType::i16)) return call_codec(f, DirectCodec<int16_t>{});
      break;
    case DType::u8:
      if constexpr (in_set(Allowed, DType::u8)) return call_codec(f, DirectCodec<uint8_t>{});
      break;
    case DType::u16:
      if constexpr (in_set(Allowed, DType::u16)) return call_codec(f, DirectCodec<uint16_t>{});
      break;
    case DType::u32:
      if constexpr (in_set(Allowed, DType::u32)) return call_codec(f, DirectCodec<uint32_t>{});
      break;
    case DType::u64:
      if constexpr (in_set(Allowed, DType::u64)) return call_codec(f, DirectCodec<uint64_t>{});
      break;
    case DType::str: break;  // the string operators do not dispatch on codecs
  }
  return absl::InvalidArgumentError(str_cat("dtype ", dtype_name(t), " is not supported"));
}

// Converts a computed value to another compute type with defined results everywhere: float to
// integer truncates toward zero, saturates out-of-range values and maps NaN to 0; integer to
// narrower integer wraps; anything to bool is "not zero" (so NaN is true).
template <typename To, typename From>
To convert_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return 0;
    const double d = static_cast<double>(v);
    if (d <= static_cast<double>(std::numeric_limits<To>::min()))
      return std::numeric_limits<To>::min();
    if (d >= static_cast<double>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(v);
  }
}

// Integer arithmetic that wraps on overflow (two's complement) instead of being undefined;
// plain arithmetic for floats.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote to at least unsigned int so narrow types do not multiply as signed int.
    using W = std::common_type_t<U, unsigned>;
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}
template <typename T>
T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>) {
    return wrap_sub(T(0), a);
  } else {
    return -a;
  }
}

// c ? a : b without a branch. Activations select on the sign of data that is close to random,
// where a mispredicted branch costs ten times the arithmetic, and GCC at -O2 branches on a float
// ?: (it emits cmov for integers).
template <typename T>
T blend(bool c, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const U mask = U(0) - static_cast<U>(c);
    return std::bit_cast<T>((std::bit_cast<U>(a) & mask) | (std::bit_cast<U>(b) & ~mask));
  } else {
    return c ? a : b;
  }
}

// Iteration plan over N operands broadcast to one output shape. Size-1 axes are dropped and
// adjacent axes that every operand reads the same way are merged, so same-shape operands become
// one long row and scalars a stride-0 row; the innermost stride of each operand is 0 or 1.
template <size_t N>
struct BroadcastPlan {
  Shape dims;  // collapsed iteration shape, rank >= 1 ({0} when there are no elements)
  std::array<std::vector<int64_t>, N> strides;
  int64_t numel = 0;
  int64_t inner_stride(size_t k) const { return strides[k].back(); }
};

// `ins` must each broadcast to `out`.
template <size_t N>
BroadcastPlan<N> plan_broadcast(const std::array<const Shape*, N>& ins, const Shape& out) {
  BroadcastPlan<N> p;
  p.numel = shape_numel(out);
  if (p.numel == 0) {
    p.dims = {0};
    for (auto& s : p.strides) s = {0};
    return p;
  }
  std::array<std::vector<int64_t>, N> full;
  for (size_t k = 0; k < N; ++k) full[k] = broadcast_strides(*ins[k], out);
  // Built innermost first, reversed at the end.
  for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
    if (out[d] == 1) continue;
    bool merge = !p.dims.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = full[k][d] == p.strides[k].back() * p.dims.back();
    if (merge) {
      p.dims.back() *= out[d];
    } else {
      p.dims.push_back(out[d]);
      for (size_t k = 0; k < N; ++k) p.strides[k].push_back(full[k][d]);
    }
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    for (size_t k = 0; k < N; ++k) p.strides[k].push_back(0);
  }
  std::reverse(p.dims.begin(), p.dims.end());
  for (auto& s : p.strides) std::reverse(s.begin(), s.end());
  return p;
}

// Calls row(offsets, out_offset, length) for every innermost row of the plan, in row-major
// order; along a row operand k advances by plan.inner_stride(k).
template <size_t N, typename Row>
void for_each_row(const BroadcastPlan<N>& p, Row&& row) {
  if (p.numel == 0) return;
  const int rank = static_cast<int>(p.dims.size());
  const int64_t inner = p.dims[rank - 1];
  std::array<int64_t, N> off{};
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < p.numel; o += inner) {
    row(std::as_const(off), o, inner);
    for (int d = rank - 2; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) off[k] += p.strides[k][d];
      if (++idx[d] < p.dims[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= p.strides[k][d] * p.dims[d];
      idx[d] = 0;
    }
  }
}

// out[i] = CO::store(f(CI::load(in[i]))) over same-shaped tensors.
template <typename CI, typename CO, typename F>
void map_elements(const Tensor& in, Tensor& out, F&& f) {
  const auto* x = in.data<typename CI::Storage>();
  auto* y = out.data<typename CO::Storage>();
  const int64_t n = in.numel();
  for (int64_t i = 0; i < n; ++i) y[i] = CO::store(f(CI::load(x[i])));
}

// out = f(a, b) with numpy broadcasting; CA, CB and CO are the codecs of a, b and out. Rows where
// one side is a broadcast scalar load it once.
template <typename CA, typename CB, typename CO, typename F>
void broadcast_binary(const Tensor& a, const Tensor& b, Tensor& out, F&& f) {
  const auto plan = plan_broadcast<2>({&a.shape(), &b.shape()}, out.shape());
  const auto* pa = a.data<typename CA::Storage>();
  const auto* pb = b.data<typename CB::Storage>();
  auto* po = out.data<typename CO::Storage>();
  const bool sa = plan.inner_stride(0) != 0, sb = plan.inner_stride(1) != 0;
  for_each_row(plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n) {
    const auto* x = pa + off[0];
    const auto* y = pb + off[1];
    auto* z = po + o;
    if (sa && sb) {
      for (int64_t j = 0; j < n; ++j) z[j] = CO::store(f(CA::load(x[j]), CB::load(y[j])));
    } else if (sb) {
      const auto xv = CA::load(*x);
      for (int64_t j = 0; j < n; ++j) z[j] = CO::store(f(xv, CB::load(y[j])));
    } else if (sa) {
      const auto yv = CB::load(*y);
      for (int64_t j = 0; j < n; ++j) z[j] = CO::store(f(CA::load(x[j]), yv));
    } else {
      std::fill(z, z + n, CO::store(f(CA::load(*x), CB::load(*y))));
    }
  });
}

// --- Shape inference helpers. Errors are InvalidArgument, prefixed "<Op> '<node>': ". ---

// Input i must have a dtype in `allowed`.
absl::Status check_dtype(const InferContext& ctx, int i, TypeSet allowed);
// Inputs i and j must have the same dtype.
absl::Status check_same_dtype(const InferContext& ctx, int i, int j);
// The caller may not ask for more than `max_outputs` outputs.
absl::Status check_output_count(const InferContext& ctx, int max_outputs);
// The numpy broadcast of the shapes of inputs `which`; an error lists the shapes.
absl::StatusOr<Shape> broadcast_inputs(const InferContext& ctx, const std::vector<int>& which);
// One input with a dtype in `allowed`; one output of the same type.
absl::Status infer_unary(InferContext& ctx, TypeSet allowed);
// Two inputs of one dtype in `allowed`, broadcast; the output has that dtype, or `out` if given.
absl::Status infer_binary(InferContext& ctx, TypeSet allowed, const DType* out = nullptr);

// A unary operator over the dtypes `Allowed` whose kernel is y = make_fn(attrs)(x), computed in
// each dtype's compute type. `infer` defaults to infer_unary.
template <TypeSet Allowed, typename A, typename MakeFn>
OpDef unary_op(std::string name, MakeFn make_fn, InferFn infer = nullptr) {
  if (!infer) infer = [](InferContext& ctx) { return infer_unary(ctx, Allowed); };
  return make_op<A>(std::move(name), FusionKind::elementwise, 1, 1, std::move(infer),
                    [make_fn](const KernelArgs& args) {
                      const auto fn = make_fn(args.get<A>());
                      return dispatch_codec<Allowed>(args.inputs[0].dtype(), [&](auto codec) {
                        using C = decltype(codec);
                        map_elements<C, C>(args.inputs[0], args.outputs[0], fn);
                      });
                    });
}

// Adds a built-in operator; a duplicate name is a programming error.
void add_builtin_op(OpRegistry& r, OpDef def);

// Registration of each elementwise file; register_elementwise_ops calls them all.
void register_unary_math_ops(OpRegistry& r);    // elementwise_unary.cpp
void register_binary_arith_ops(OpRegistry& r);  // elementwise_binary.cpp
void register_comparison_ops(OpRegistry& r);    // elementwise_compare.cpp
void register_cast_ops(OpRegistry& r);          // elementwise_cast.cpp
void register_activation_ops(OpRegistry& r);    // elementwise_activation.cpp
void register_logic_ops(OpRegistry& r);         // elementwise_logic.cpp
void register_math_ops(OpRegistry& r);          // elementwise_math.cpp
void register_variadic_ops(OpRegistry& r);      // elementwise_variadic.cpp

}  // namespace collage::ops
