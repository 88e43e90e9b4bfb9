// Generated code on the element types beyond f32/f16/bf16/i8/i32/i64: u32 and u64
// (zero-extended, compared and divided without sign) and f64, against the reference kernels
// on values that use every bit (u32 above 2^31, u64 above 2^63), so that a signed compare, divide
// or widening would show.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "collage/ops/elementwise.h"
#include "collage/ops/math.h"
#include "collage/ops/nn.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

const std::vector<DType> kIntegers = {DType::u32, DType::u64};

// Random bit patterns; `nonzero` sets the lowest bit (a divisor).
Tensor random_bits(DType t, const Shape& shape, uint64_t seed, bool nonzero = false) {
  Tensor x(t, shape);
  std::mt19937_64 rng(seed);
  const size_t size = dtype_size(t);
  auto* bytes = static_cast<uint8_t*>(x.raw());
  for (int64_t i = 0; i < x.numel(); ++i) {
    uint64_t v = rng();
    // A quarter of the values small, so that sums, products and compares of near values occur.
    if (i % 4 == 0) v %= 7;
    if (nonzero) v |= 1;
    std::memcpy(bytes + i * size, &v, size);  // the low bytes (little-endian)
  }
  return x;
}

Tensor random_f64(const Shape& shape, uint64_t seed) {
  Tensor x(DType::f64, shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-3.0, 3.0);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = dist(rng);
  return x;
}

}  // namespace

TEST_CASE("te_ops: unsigned and i16 arithmetic and comparisons use every bit", "[te_ops]") {
  Context ctx;
  const Shape a{3, 37}, b{37};
  for (DType t : kIntegers)
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "LessOrEqual",
                           "GreaterOrEqual", "Max", "Min"}) {
      INFO(op << " " << dtype_name(t));
      GroupCheck check;
      check.inputs = {random_bits(t, a, 5), random_bits(t, b, 6, std::string(op) == "Div")};
      check_group(native_backend(), single_op_graph(ctx, op, {{t, a}, {t, b}}), check);
    }
}

TEST_CASE("te_ops: unsigned and i16 casts zero- or sign-extend by the source type", "[te_ops]") {
  Context ctx;
  const Shape s{2, 41};
  for (DType from : kIntegers)
    for (const char* to : {"u32", "u64", "i32", "i64", "f32", "f64"}) {
      INFO(dtype_name(from) << " to " << to);
      GroupCheck check;
      check.inputs = {random_bits(from, s, 9)};
      check_group(native_backend(),
                  single_op_graph(ctx, "Cast", {{from, s}},
                                  make_attrs<CastAttrs>([&](auto& a) { a.to = to; })),
                  check);
    }
  // Floats to unsigned saturate at 0 and at the type's maximum (the reference's conversion).
  for (const char* to : {"u32"}) {
    INFO("f32 to " << to);
    check_group(native_backend(),
                single_op_graph(ctx, "Cast", {{DType::f32, s}},
                                make_attrs<CastAttrs>([&](auto& a) { a.to = to; })),
                {0, 0.f, 300.f});
  }
}

TEST_CASE("te_ops: unsigned reductions and Clip keep unsigned order", "[te_ops]") {
  Context ctx;
  const Shape s{5, 33};
  auto last = make_attrs<ReduceAttrs>([](auto& a) {
    a.axes = {-1};
    a.keepdims = 0;
  });
  for (DType t : kIntegers)
    for (const char* op : {"ReduceMax", "ReduceMin"}) {
      INFO(op << " " << dtype_name(t));
      GroupCheck check;
      check.inputs = {random_bits(t, s, 13)};
      check_group(native_backend(), single_op_graph(ctx, op, {{t, s}}, last), check);
    }
  GroupCheck check;
  check.inputs = {random_bits(DType::u32, s, 17)};
  check_group(native_backend(),
              single_op_graph(ctx, "Clip", {{DType::u32, s}}, make_attrs<ClipAttrs>([](auto& a) {
                                a.min = 3.5f;
                                a.max = 3e9f;
                              })),
              check);
}

TEST_CASE("te_ops: f64 computes in double precision", "[te_ops]") {
  Context ctx;
  const Shape a{3, 37}, b{37};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "Less", "Equal"}) {
    INFO(op);
    GroupCheck check;
    // 1e-12: a kernel that went through f32 would be off by about 1e-7.
    check.tolerance = 1e-12;
    check.inputs = {random_f64(a, 21), random_f64(b, 22)};
    check_group(native_backend(), single_op_graph(ctx, op, {{DType::f64, a}, {DType::f64, b}}),
                check);
  }
  for (const char* op : {"Abs", "Neg", "Relu", "Floor", "Ceil"}) {
    INFO(op);
    GroupCheck check;
    check.tolerance = 1e-12;
    check.inputs = {random_f64(a, 23)};
    if (std::string(op) == "Sqrt")
      for (int64_t i = 0; i < check.inputs[0].numel(); ++i)
        check.inputs[0].data<double>()[i] = std::abs(check.inputs[0].data<double>()[i]);
    check_group(native_backend(), single_op_graph(ctx, op, {{DType::f64, a}}), check);
  }
  for (const char* to : {"f32", "f16", "i64", "u32"}) {
    INFO("f64 to " << to);
    GroupCheck check;
    check.inputs = {random_f64(a, 25)};
    if (std::string(to) == "u32")
      for (int64_t i = 0; i < check.inputs[0].numel(); ++i)
        check.inputs[0].data<double>()[i] = std::abs(check.inputs[0].data<double>()[i]) * 80;
    check_group(native_backend(),
                single_op_graph(ctx, "Cast", {{DType::f64, a}},
                                make_attrs<CastAttrs>([&](auto& a) { a.to = to; })),
                check);
  }
}

TEST_CASE("te_ops: f64 exp, log, tanh, erf and sigmoid call libm in double precision",
          "[te_ops]") {
  Context ctx;
  const Shape a = {3, 17};
  for (const char* op : {"Exp", "Log", "Tanh", "Erf", "Sigmoid", "Elu", "Softplus"}) {
    INFO(op);
    GroupCheck check;
    // The reference computes these in f32 whatever the float type (lib/ops/elementwise_unary.cpp),
    // the generated code in f64 (Log near 1 shows the input's rounding to f32 most).
    check.tolerance = 1e-4;
    check.claim = true;
    check.inputs = {random_f64(a, 27)};
    if (std::string(op) == "Log")
      for (int64_t i = 0; i < check.inputs[0].numel(); ++i)
        check.inputs[0].data<double>()[i] = std::abs(check.inputs[0].data<double>()[i]) + 0.01;
    std::shared_ptr<const OpAttrs> attrs;
    if (std::string(op) == "Elu") attrs = std::make_shared<AlphaAttrs>();
    check_group(native_backend(), single_op_graph(ctx, op, {{DType::f64, a}}, attrs), check);
  }
}
