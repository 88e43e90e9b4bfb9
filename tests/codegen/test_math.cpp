// Math intrinsics in generated code against the C library, vectorized and scalar, including
// special values.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "jit_test_util.h"

using namespace collage;
using collage::testing::compile_kernel;
using collage::testing::run_tasks;
namespace te = collage::te;

namespace {

// out[i] = f(in[i]) for every input, computed by a vectorized kernel (with a masked tail) and a
// scalar one.
std::pair<std::vector<float>, std::vector<float>> apply_kernel(
    const std::function<te::Expr(te::Expr)>& f, const std::vector<float>& in) {
  const int64_t n = static_cast<int64_t>(in.size());
  te::Tensor X = te::placeholder({n}, DType::f32, "X");
  te::Tensor Y = te::compute(
      {n}, [&](te::Var i) { return f(X(i)); }, "Y");
  std::vector<float> vec(n), scal(n);
  {
    te::Schedule s = te::create_schedule({Y});
    auto [o, i] = s[Y].split(Y.axis(0), 16);
    s[Y].vectorize(i);
    testing::Compiled k = compile_kernel(s, {X, Y});
    run_tasks(k, {const_cast<float*>(in.data()), vec.data()});
  }
  {
    te::Schedule s = te::create_schedule({Y});
    testing::Compiled k = compile_kernel(s, {X, Y});
    run_tasks(k, {const_cast<float*>(in.data()), scal.data()});
  }
  return {vec, scal};
}

std::vector<float> sweep(float lo, float hi, int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1);
  return v;
}

// Checks |got - ref| <= abs_tol + rel_tol * |ref| for both variants, and that they agree bit for
// bit.
void check(const std::function<te::Expr(te::Expr)>& f, const std::function<double(double)>& ref,
           const std::vector<float>& in, double rel_tol, double abs_tol) {
  auto [vec, scal] = apply_kernel(f, in);
  for (size_t i = 0; i < in.size(); ++i) {
    const double r = ref(in[i]);
    INFO("x = " << in[i] << " expected " << r << " got " << vec[i]);
    REQUIRE(std::fabs(vec[i] - r) <= abs_tol + rel_tol * std::fabs(r));
    REQUIRE(std::memcmp(&vec[i], &scal[i], sizeof(float)) == 0);
  }
}

const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("exp and log are accurate to a few ulp", "[codegen][math]") {
  check([](te::Expr x) { return te::exp(x); }, [](double x) { return std::exp(x); },
        sweep(-87.f, 88.5f, 4001), 5e-7, 1e-37);
  check([](te::Expr x) { return te::log(x); }, [](double x) { return std::log(x); },
        sweep(1e-30f, 1e4f, 4001), 3e-7, 2e-7);
  check([](te::Expr x) { return te::log(x); }, [](double x) { return std::log(x); },
        sweep(0.25f, 4.f, 4001), 3e-7, 2e-7);
}

TEST_CASE("tanh, erf and sigmoid", "[codegen][math]") {
  check([](te::Expr x) { return te::tanh(x); }, [](double x) { return std::tanh(x); },
        sweep(-12.f, 12.f, 4801), 2e-6, 2e-7);
  check([](te::Expr x) { return te::erf(x); }, [](double x) { return std::erf(x); },
        sweep(-6.f, 6.f, 4801), 1e-6, 3e-7);
  check([](te::Expr x) { return te::sigmoid(x); },
        [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, sweep(-30.f, 30.f, 2001), 1e-6, 1e-30);
}

TEST_CASE("sqrt, rsqrt, pow, fabs, floor, ceil and round", "[codegen][math]") {
  std::vector<float> pos = sweep(0.01f, 50.f, 997);
  check([](te::Expr x) { return te::sqrt(x); }, [](double x) { return std::sqrt(x); }, pos, 1e-7,
        0);
  check([](te::Expr x) { return te::rsqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); }, pos,
        2e-7, 0);
  check([](te::Expr x) { return te::pow(x, 1.5f); }, [](double x) { return std::pow(x, 1.5); }, pos,
        3e-7, 0);
  std::vector<float> mixed = sweep(-7.5f, 7.5f, 61);
  check([](te::Expr x) { return te::fabs(x); }, [](double x) { return std::fabs(x); }, mixed, 0, 0);
  check([](te::Expr x) { return te::floor(x); }, [](double x) { return std::floor(x); }, mixed, 0,
        0);
  check([](te::Expr x) { return te::ceil(x); }, [](double x) { return std::ceil(x); }, mixed, 0, 0);
  check([](te::Expr x) { return te::round(x); }, [](double x) { return std::nearbyint(x); }, mixed,
        0, 0);
}

TEST_CASE("special values", "[codegen][math]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> in = {kInf, -kInf, nan, 0.f, -0.f, -1.f, 1e-40f};
  auto run = [&](const std::function<te::Expr(te::Expr)>& f) { return apply_kernel(f, in).first; };
  std::vector<float> e = run([](te::Expr x) { return te::exp(x); });
  CHECK(e[0] == kInf);
  CHECK(e[1] == 0.f);
  CHECK(std::isnan(e[2]));
  CHECK(e[3] == 1.f);
  std::vector<float> l = run([](te::Expr x) { return te::log(x); });
  CHECK(l[0] == kInf);
  CHECK(std::isnan(l[1]));
  CHECK(std::isnan(l[2]));
  CHECK(l[3] == -kInf);
  CHECK(l[4] == -kInf);
  CHECK(std::isnan(l[5]));
  CHECK(std::fabs(l[6] - std::log(1e-40)) < 1e-5 * 92);  // subnormal input
  std::vector<float> t = run([](te::Expr x) { return te::tanh(x); });
  CHECK(t[0] == 1.f);
  CHECK(t[1] == -1.f);
  CHECK(std::isnan(t[2]));
  std::vector<float> r = run([](te::Expr x) { return te::erf(x); });
  CHECK(r[0] == 1.f);
  CHECK(r[1] == -1.f);
  CHECK(std::isnan(r[2]));
  std::vector<float> s = run([](te::Expr x) { return te::sigmoid(x); });
  CHECK(s[0] == 1.f);
  CHECK(s[1] == 0.f);
  std::vector<float> mx = run([](te::Expr x) { return te::maximum(x, 0.0f); });
  CHECK(mx[0] == kInf);
  CHECK(mx[1] == 0.f);
  CHECK(std::isnan(mx[2]));  // max propagates NaN
  CHECK(mx[5] == 0.f);
  std::vector<float> mn = run([](te::Expr x) { return te::minimum(x, 0.0f); });
  CHECK(mn[1] == -kInf);
  CHECK(std::isnan(mn[2]));
}
