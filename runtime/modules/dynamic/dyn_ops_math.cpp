// Elementwise arithmetic in the dynamic module: Add, Sub, Mul, Div, Greater, Less and Equal with
// numpy broadcasting, And, Or and Not of bools, and Relu, Sigmoid, Tanh, Exp, Log, Cos, Sin, Neg,
// Abs and Sqrt, on f32, f64, f16, bf16, i32 and i64 (Equal on bool too; the float functions on
// the float types only; f32, f16 and bf16 computed in float as the reference does, 16-bit results
// rounded to their type, dyn_half.h). Integer division truncates toward zero, and by zero is an error. Pow of
// an i32 or i64 base to an i32 or i64 exponent, wrapping (dyn_int_pow.h), with broadcasting.
#include <cmath>
#include <type_traits>

#include "dyn_half.h"
#include "dyn_int_pow.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

template <typename F>
void dispatch_number(int32_t dtype, F&& f) {
  switch (dtype) {
    case COLLAGE_DTYPE_F32: f(static_cast<float*>(nullptr)); return;
    case COLLAGE_DTYPE_F64: f(static_cast<double*>(nullptr)); return;
    case COLLAGE_DTYPE_F16: f(static_cast<F16*>(nullptr)); return;
    case COLLAGE_DTYPE_BF16: f(static_cast<BF16*>(nullptr)); return;
    case COLLAGE_DTYPE_I64: f(static_cast<int64_t*>(nullptr)); return;
    case COLLAGE_DTYPE_I32: f(static_cast<int32_t*>(nullptr)); return;
    case COLLAGE_DTYPE_BOOL: f(static_cast<uint8_t*>(nullptr)); return;
    default: throw KernelError("element type " + type_text(dtype, {}) + " is not supported here");
  }
}

std::vector<int64_t> broadcast(const Value& a, const Value& b) {
  const size_t rank = std::max(a.shape.size(), b.shape.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.shape.size() >= rank ? a.shape[i + a.shape.size() - rank] : 1;
    const int64_t db = i + b.shape.size() >= rank ? b.shape[i + b.shape.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      throw KernelError("cannot broadcast " + type_text(a.dtype, a.shape) + " with " +
                        type_text(b.dtype, b.shape));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Strides reading `v` as if it had shape `out` (0 on broadcast axes).
std::vector<int64_t> read_strides(const Value& v, const std::vector<int64_t>& out) {
  const std::vector<int64_t> s = strides_of(v.shape);
  std::vector<int64_t> r(out.size(), 0);
  const size_t shift = out.size() - v.shape.size();
  for (size_t i = 0; i < v.shape.size(); ++i) r[shift + i] = v.shape[i] == 1 ? 0 : s[i];
  return r;
}

template <typename T, typename R, typename F>
void binary_loop(const Value& a, const Value& b, const std::vector<int64_t>& shape, R* out, F f) {
  const std::vector<int64_t> sa = read_strides(a, shape), sb = read_strides(b, shape);
  const int64_t n = numel(shape);
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> index(rank, 0);
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = 0, ib = 0;
    for (int64_t d = 0; d < rank; ++d) {
      ia += index[d] * sa[d];
      ib += index[d] * sb[d];
    }
    out[i] = f(pa[ia], pb[ib]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

void binary(DynOp op, const Value& a, const Value& b, Outputs& out) {
  if (a.dtype != b.dtype)
    throw KernelError("operands " + type_text(a.dtype, a.shape) + " and " +
                      type_text(b.dtype, b.shape) + " differ in type");
  const std::vector<int64_t> shape = broadcast(a, b);
  const bool compare = op == DynOp::greater || op == DynOp::less || op == DynOp::equal;
  if (a.dtype == COLLAGE_DTYPE_BOOL && op != DynOp::equal)
    throw KernelError(std::string(dyn_op_name(op)) + " does not take bool");
  dispatch_number(a.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (compare) {
      uint8_t* o = out.make(0, shape);
      if (op == DynOp::greater) binary_loop<T>(a, b, shape, o, [](T x, T y) { return x > y; });
      if (op == DynOp::less) binary_loop<T>(a, b, shape, o, [](T x, T y) { return x < y; });
      if (op == DynOp::equal) binary_loop<T>(a, b, shape, o, [](T x, T y) { return x == y; });
      return;
    }
    T* o = out.make_as<T>(0, shape);
    switch (op) {
      case DynOp::add: binary_loop<T>(a, b, shape, o, [](T x, T y) { return T(x + y); }); break;
      case DynOp::sub: binary_loop<T>(a, b, shape, o, [](T x, T y) { return T(x - y); }); break;
      case DynOp::mul: binary_loop<T>(a, b, shape, o, [](T x, T y) { return T(x * y); }); break;
      default:
        binary_loop<T>(a, b, shape, o, [](T x, T y) {
          if constexpr (std::is_integral_v<T>) {
            if (y == 0) throw KernelError("integer division by zero");
          }
          return T(x / y);
        });
    }
  });
}

// Pow of integers: the base's type, the exponent i32 or i64.
void integer_pow(const Value& a, const Value& b, Outputs& out) {
  const std::vector<int64_t> shape = broadcast(a, b);
  if (b.dtype != COLLAGE_DTYPE_I32 && b.dtype != COLLAGE_DTYPE_I64)
    throw KernelError("exponent " + type_text(b.dtype, b.shape) + " is not i32 or i64");
  auto loop = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const std::vector<int64_t> sa = read_strides(a, shape), sb = read_strides(b, shape);
    const auto rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> index(rank, 0);
    T* o = out.make_as<T>(0, shape);
    const int64_t n = numel(shape);
    for (int64_t i = 0; i < n; ++i) {
      int64_t ia = 0, ib = 0;
      for (int64_t d = 0; d < rank; ++d) {
        ia += index[d] * sa[d];
        ib += index[d] * sb[d];
      }
      o[i] = int_pow(a.as<T>()[ia], int_at(b, ib));
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
  };
  if (a.dtype == COLLAGE_DTYPE_I32) return loop(static_cast<int32_t*>(nullptr));
  if (a.dtype == COLLAGE_DTYPE_I64) return loop(static_cast<int64_t*>(nullptr));
  throw KernelError("base " + type_text(a.dtype, a.shape) + " is not i32 or i64");
}

void unary(DynOp op, const Value& x, Outputs& out) {
  const bool is_float = x.dtype == COLLAGE_DTYPE_F32 || x.dtype == COLLAGE_DTYPE_F64 ||
                        x.dtype == COLLAGE_DTYPE_F16 || x.dtype == COLLAGE_DTYPE_BF16;
  if (!is_float && !(op == DynOp::relu || op == DynOp::neg || op == DynOp::abs))
    throw KernelError(std::string(dyn_op_name(op)) + " takes f32, f64, f16 or bf16 here, not " +
                      type_text(x.dtype, x.shape));
  dispatch_number(x.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if constexpr (std::is_same_v<T, uint8_t>) {
      throw KernelError(std::string(dyn_op_name(op)) + " does not take bool");
    } else {
      using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* in = x.as<T>();
      T* o = out.make_as<T>(0, x.shape);
      const int64_t n = x.numel();
      for (int64_t i = 0; i < n; ++i) {
        const T v = in[i];
        const F f = static_cast<F>(v);
        switch (op) {
          case DynOp::relu: o[i] = v > T(0) ? v : T(0); break;
          case DynOp::neg: o[i] = T(-v); break;
          case DynOp::abs: o[i] = v < T(0) ? T(-v) : v; break;
          case DynOp::sigmoid: o[i] = T(1 / (1 + std::exp(-f))); break;
          case DynOp::exp: o[i] = T(std::exp(f)); break;
          case DynOp::log: o[i] = T(std::log(f)); break;
          case DynOp::cos: o[i] = T(std::cos(f)); break;
          case DynOp::sin: o[i] = T(std::sin(f)); break;
          case DynOp::tanh: o[i] = T(std::tanh(f)); break;
          default: o[i] = T(std::sqrt(f)); break;
        }
      }
    }
  });
}

void logical(DynOp op, const std::vector<Value>& in, Outputs& out) {
  for (const Value& v : in)
    if (v.dtype != COLLAGE_DTYPE_BOOL)
      throw KernelError(std::string(dyn_op_name(op)) + " takes bool, not " +
                        type_text(v.dtype, v.shape));
  if (op == DynOp::logical_not) {
    uint8_t* o = out.make(0, in[0].shape);
    for (int64_t i = 0; i < in[0].numel(); ++i) o[i] = !in[0].data[i];
    return;
  }
  const std::vector<int64_t> shape = broadcast(in[0], in[1]);
  uint8_t* o = out.make(0, shape);
  if (op == DynOp::logical_and)
    binary_loop<uint8_t>(in[0], in[1], shape, o, [](uint8_t x, uint8_t y) { return x && y; });
  else
    binary_loop<uint8_t>(in[0], in[1], shape, o, [](uint8_t x, uint8_t y) { return x || y; });
}

}  // namespace

bool run_math_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  switch (p.op) {
    case DynOp::add:
    case DynOp::sub:
    case DynOp::mul:
    case DynOp::div:
    case DynOp::greater:
    case DynOp::less:
    case DynOp::equal:
      binary(p.op, in[0], in[1], out);
      return true;
    case DynOp::pow:
      integer_pow(in[0], in[1], out);
      return true;
    case DynOp::logical_not:
    case DynOp::logical_and:
    case DynOp::logical_or:
      logical(p.op, in, out);
      return true;
    case DynOp::relu:
    case DynOp::sigmoid:
    case DynOp::exp:
    case DynOp::neg:
    case DynOp::abs:
    case DynOp::sqrt:
    case DynOp::log:
    case DynOp::cos:
    case DynOp::sin:
    case DynOp::tanh:
      unary(p.op, in[0], out);
      return true;
    default:
      return false;
  }
}

}  // namespace collage::rt_dynamic
