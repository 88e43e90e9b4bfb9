// Integer arithmetic, conversions and storage types in generated code: truncating and floor
// division (with 0 and -1 divisors), saturating float-to-int, bool buffers, f16/bf16 storage.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "jit_test_util.h"

using namespace collage;
using collage::testing::compile_kernel;
using collage::testing::run_tasks;
namespace te = collage::te;

namespace {

int32_t ref_div(int32_t a, int32_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int32_t>(0u - static_cast<uint32_t>(a));
  return a / b;
}
int32_t ref_mod(int32_t a, int32_t b) {
  return (b == 0 || b == -1) ? 0 : a % b;
}
int32_t ref_floordiv(int32_t a, int32_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int32_t>(0u - static_cast<uint32_t>(a));
  int32_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int32_t ref_floormod(int32_t a, int32_t b) {
  if (b == 0 || b == -1) return 0;
  int32_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Schedules `outputs` plainly or with their single axis split by 8 and vectorized.
te::Schedule schedule(const std::vector<te::Tensor>& outputs, bool vectorize) {
  te::Schedule s = te::create_schedule(outputs);
  if (vectorize) {
    for (const te::Tensor& t : outputs) {
      auto [o, i] = s[t].split(t.axis(0), 8);
      s[t].vectorize(i);
    }
  }
  return s;
}

}  // namespace

TEST_CASE("integer division and remainder, truncating and floored", "[codegen][types]") {
  std::vector<int32_t> a, b;
  for (int32_t x : {INT_MIN, -17, -8, -7, -1, 0, 1, 7, 8, 17, INT_MAX}) {
    for (int32_t y : {-8, -3, -1, 0, 1, 3, 8}) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  const int64_t n = static_cast<int64_t>(a.size());
  te::Tensor A = te::placeholder({n}, DType::i32, "A");
  te::Tensor B = te::placeholder({n}, DType::i32, "B");
  te::Tensor D = te::compute(
      {n}, [&](te::Var i) { return te::div(A(i), B(i)); }, "D");
  te::Tensor R = te::compute(
      {n}, [&](te::Var i) { return te::mod(A(i), B(i)); }, "R");
  te::Tensor FD = te::compute(
      {n}, [&](te::Var i) { return te::floordiv(A(i), B(i)); }, "FD");
  te::Tensor FM = te::compute(
      {n}, [&](te::Var i) { return te::floormod(A(i), B(i)); }, "FM");
  // Constant divisors take a separate path.
  te::Tensor C3 = te::compute(
      {n}, [&](te::Var i) { return te::floordiv(A(i), -3) + te::floormod(A(i), 8); }, "C3");
  for (bool vec : {false, true}) {
    te::Schedule s = schedule({D, R, FD, FM, C3}, vec);
    testing::Compiled k = compile_kernel(s, {A, B, D, R, FD, FM, C3});
    std::vector<int32_t> d(n), r(n), fd(n), fm(n), c3(n);
    run_tasks(k, {a.data(), b.data(), d.data(), r.data(), fd.data(), fm.data(), c3.data()});
    for (int64_t i = 0; i < n; ++i) {
      INFO(a[i] << " / " << b[i] << (vec ? " vectorized" : ""));
      CHECK(d[i] == ref_div(a[i], b[i]));
      CHECK(r[i] == ref_mod(a[i], b[i]));
      CHECK(fd[i] == ref_floordiv(a[i], b[i]));
      CHECK(fm[i] == ref_floormod(a[i], b[i]));
      CHECK(c3[i] == static_cast<int32_t>(static_cast<uint32_t>(ref_floordiv(a[i], -3)) +
                                          static_cast<uint32_t>(ref_floormod(a[i], 8))));
    }
  }
}

TEST_CASE("conversions: saturating float to int, bool, narrowing integers", "[codegen][types]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {-3.7f, -0.5f, 0.f, 0.5f, 2.9f, 3e9f, -3e9f, nan, 1e-30f};
  const int64_t n = static_cast<int64_t>(x.size());
  te::Tensor X = te::placeholder({n}, DType::f32, "X");
  te::Tensor I = te::compute(
      {n}, [&](te::Var i) { return te::cast(DType::i32, X(i)); }, "I");
  te::Tensor Bo = te::compute(
      {n}, [&](te::Var i) { return te::cast(DType::boolean, X(i)); }, "Bo");
  te::Tensor G = te::compute(
      {n}, [&](te::Var i) { return X(i) > 0.25f; }, "G");
  te::Tensor F = te::compute(
      {n},
      [&](te::Var i) {
        return te::select(X(i) > 0.25f, 1.0f, -1.0f) + te::cast(DType::f32, X(i) < 0.0f);
      },
      "F");
  te::Tensor N8 = te::compute(
      {n}, [&](te::Var i) { return te::cast(DType::i8, te::cast(DType::i64, i) * 100 + 7); }, "N8");
  for (bool vec : {false, true}) {
    te::Schedule s = schedule({I, Bo, G, F, N8}, vec);
    testing::Compiled k = compile_kernel(s, {X, I, Bo, G, F, N8});
    std::vector<int32_t> i32(n);
    std::vector<uint8_t> bo(n, 7), g(n, 7);
    std::vector<float> f(n);
    std::vector<int8_t> n8(n);
    run_tasks(k, {x.data(), i32.data(), bo.data(), g.data(), f.data(), n8.data()});
    const std::vector<int32_t> want_i = {-3, 0, 0, 0, 2, INT_MAX, INT_MIN, 0, 0};
    const std::vector<uint8_t> want_bo = {1, 1, 0, 1, 1, 1, 1, 1, 1};
    const std::vector<uint8_t> want_g = {0, 0, 0, 1, 1, 1, 0, 0, 0};
    CHECK(i32 == want_i);
    CHECK(bo == want_bo);
    CHECK(g == want_g);
    for (int64_t i = 0; i < n; ++i) {
      float want = (x[i] > 0.25f ? 1.f : -1.f) + (x[i] < 0.f ? 1.f : 0.f);
      CHECK(f[i] == want);
      CHECK(n8[i] == static_cast<int8_t>(i * 100 + 7));
    }
  }
}

TEST_CASE("conversions: saturating float to 8-, 16- and 32-bit integers at the edges",
          "[codegen][types]") {
  // The conversions clamp in float and convert with a plain (vectorizable) fptosi: the values
  // around each type's bounds, 2^31 (no i32) and the float just below it, NaN and infinities.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {-129.f,  -128.5f, -128.f, -1.5f, 126.9f, 127.f,   127.5f,  255.f,
                          255.5f,  256.f,   65535.f, 65536.f, -32769.f, 2147483520.f,
                          2147483648.f, -2147483648.f, -3e9f, nan, inf, -inf};
  const int64_t n = static_cast<int64_t>(x.size());
  te::Tensor X = te::placeholder({n}, DType::f32, "X");
  const DType types[] = {DType::i8, DType::u8, DType::i16, DType::u16, DType::i32};
  std::vector<te::Tensor> outs = {X};
  for (DType t : types)
    outs.push_back(te::compute(
        {n}, [&](te::Var i) { return te::cast(t, X(i)); }, "C_" + std::string(dtype_name(t))));
  // What a saturating conversion gives: NaN 0, else the value truncated and clamped.
  auto want = [](float v, double lo, double hi) {
    if (std::isnan(v)) return 0.0;
    return std::clamp(std::trunc(static_cast<double>(v)), lo, hi);
  };
  for (bool vec : {false, true}) {
    te::Schedule s = schedule({outs.begin() + 1, outs.end()}, vec);
    testing::Compiled k = compile_kernel(s, outs);
    std::vector<int8_t> i8(n);
    std::vector<uint8_t> u8(n);
    std::vector<int16_t> i16(n);
    std::vector<uint16_t> u16(n);
    std::vector<int32_t> i32(n);
    run_tasks(k, {x.data(), i8.data(), u8.data(), i16.data(), u16.data(), i32.data()});
    for (int64_t i = 0; i < n; ++i) {
      INFO((vec ? "vectorized, x = " : "scalar, x = ") << x[i]);
      CHECK(i8[i] == want(x[i], -128, 127));
      CHECK(u8[i] == want(x[i], 0, 255));
      CHECK(i16[i] == want(x[i], -32768, 32767));
      CHECK(u16[i] == want(x[i], 0, 65535));
      CHECK(i32[i] == want(x[i], INT_MIN, INT_MAX));
    }
  }
}

TEST_CASE("bool buffers are read and written as one byte per element", "[codegen][types]") {
  const int64_t n = 13;
  te::Tensor M = te::placeholder({n}, DType::boolean, "M");
  te::Tensor X = te::placeholder({n}, DType::f32, "X");
  te::Tensor Y = te::compute(
      {n}, [&](te::Var i) { return te::select(M(i), X(i), -X(i)); }, "Y");
  te::Tensor NM = te::compute(
      {n}, [&](te::Var i) { return !M(i) || X(i) > 0.0f; }, "NM");
  std::vector<uint8_t> m(n);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) {
    m[i] = i % 3 == 0;
    x[i] = static_cast<float>(i) - 6.f;
  }
  for (bool vec : {false, true}) {
    te::Schedule s = schedule({Y, NM}, vec);
    testing::Compiled k = compile_kernel(s, {M, X, Y, NM});
    std::vector<float> y(n);
    std::vector<uint8_t> nm(n, 9);
    run_tasks(k, {m.data(), x.data(), y.data(), nm.data()});
    for (int64_t i = 0; i < n; ++i) {
      CHECK(y[i] == (m[i] ? x[i] : -x[i]));
      CHECK(nm[i] == ((!m[i] || x[i] > 0) ? 1 : 0));
    }
  }
}

TEST_CASE("f16 and bf16 are storage types converted through f32", "[codegen][types]") {
  std::vector<float> x = {0.f, 1.f, -2.5f, 65504.f, 1e6f, 1e-8f, 3.14159265f, 1.00390625f, -0.1f};
  const int64_t n = static_cast<int64_t>(x.size());
  te::Tensor X = te::placeholder({n}, DType::f32, "X");
  te::Tensor H = te::compute(
      {n}, [&](te::Var i) { return te::cast(DType::f16, X(i)); }, "H");
  te::Tensor BF = te::compute(
      {n}, [&](te::Var i) { return te::cast(DType::bf16, X(i)); }, "BF");
  te::Tensor HI = te::placeholder({n}, DType::f16, "HI");
  te::Tensor BI = te::placeholder({n}, DType::bf16, "BI");
  te::Tensor S = te::compute(
      {n}, [&](te::Var i) { return HI(i) + BI(i); }, "S");
  std::vector<uint16_t> hi(n), bi(n);
  for (int64_t i = 0; i < n; ++i) {
    hi[i] = float_to_half(x[i] * 0.5f);
    bi[i] = float_to_bfloat16(x[i] * 0.25f);
  }
  for (bool vec : {false, true}) {
    te::Schedule s = schedule({H, BF, S}, vec);
    testing::Compiled k = compile_kernel(s, {X, HI, BI, H, BF, S});
    std::vector<uint16_t> h(n), bf(n);
    std::vector<float> sum(n);
    run_tasks(k, {x.data(), hi.data(), bi.data(), h.data(), bf.data(), sum.data()});
    for (int64_t i = 0; i < n; ++i) {
      INFO("x = " << x[i]);
      CHECK(h[i] == float_to_half(x[i]));
      CHECK(bf[i] == float_to_bfloat16(x[i]));
      CHECK(sum[i] == half_to_float(hi[i]) + bfloat16_to_float(bi[i]));
    }
  }
}
