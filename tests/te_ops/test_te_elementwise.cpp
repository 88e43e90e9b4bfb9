// Conformance of the elementwise TE computes (activations, arithmetic with broadcasting,
// comparisons, Where, Cast, Identity, Dropout) against the reference kernels, on shapes whose
// innermost sizes leave tails for every vector width and whose sizes cross the parallel threshold.
#include <catch2/catch.hpp>

#include "collage/ops/elementwise.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

const std::vector<Shape> kShapes = {{5}, {3, 17}, {2, 3, 37}, {3, 41, 37}, {1, 1}, {}};

}  // namespace

TEST_CASE("te_ops: unary operators match the reference on odd shapes", "[te_ops]") {
  Context ctx;
  struct Case {
    std::string op;
    std::shared_ptr<const OpAttrs> attrs = nullptr;
    float lo = -3.f, hi = 3.f;
  };
  const std::vector<Case> cases = {
      {"Relu"}, {"Neg"}, {"Abs"}, {"Sigmoid"}, {"Tanh"}, {"Erf"}, {"Exp"},
      {"Log", nullptr, 0.1f, 4.f}, {"Sqrt", nullptr, 0.f, 4.f}, {"Reciprocal", nullptr, 0.5f, 3.f},
      {"LeakyRelu", make_attrs<LeakyReluAttrs>([](auto& a) { a.alpha = 0.3f; })},
      {"HardSigmoid", make_attrs<HardSigmoidAttrs>([](auto& a) { a.alpha = 0.4f; })},
      {"HardSwish"}, {"Gelu"},
      {"Gelu", make_attrs<GeluAttrs>([](auto& a) { a.approximate = "tanh"; })},
      {"Clip", make_attrs<ClipAttrs>([](auto& a) { a.min = -0.5f; a.max = 1.5f; })},
      {"Clip", make_attrs<ClipAttrs>([](auto& a) { a.max = 0.f; })},
      {"Identity"}, {"Dropout"}};
  for (const Case& c : cases) {
    for (const Shape& s : kShapes) {
      INFO(c.op << " on " << shape_to_string(s));
      // 1e-4: libm's and LLVM's erf/tanh/exp differ in the last bits.
      check_group(native_backend(), single_op_graph(ctx, c.op, {{DType::f32, s}}, c.attrs),
                  {1e-4, c.lo, c.hi});
    }
  }
}

TEST_CASE("te_ops: integer unary operators are exact", "[te_ops]") {
  Context ctx;
  for (const char* op : {"Relu", "Neg", "Abs", "Identity"})
    for (DType t : {DType::i32, DType::i64}) {
      INFO(op << " " << dtype_name(t));
      check_group(native_backend(), single_op_graph(ctx, op, {{t, {3, 19}}}));
    }
  check_group(native_backend(), single_op_graph(ctx, "Clip", {{DType::i32, {2, 9}}},
                                                make_attrs<ClipAttrs>([](auto& a) {
                                                  a.min = 0.5f;
                                                  a.max = 3.2f;
                                                })));
}

TEST_CASE("te_ops: binary operators broadcast like numpy", "[te_ops]") {
  Context ctx;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 17}, {3, 17}}, {{2, 3, 37}, {37}}, {{4, 1, 9}, {5, 1}}, {{1}, {3, 41, 37}}, {{}, {7}},
      {{3, 1, 37}, {3, 41, 1}}};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "PRelu", "Equal", "Less", "Greater"}) {
    for (const auto& [a, b] : shapes) {
      // PRelu's slope must broadcast into x's shape.
      if (std::string(op) == "PRelu" && (a.size() < b.size() || a.size() == 3)) continue;
      INFO(op << " " << shape_to_string(a) << " " << shape_to_string(b));
      check_group(native_backend(), single_op_graph(ctx, op, {{DType::f32, a}, {DType::f32, b}}),
                  {1e-5, 0.5f, 2.f});
    }
  }
  // Pow with a positive base, and with the constant exponent 2 of LayerNorm decompositions.
  check_group(native_backend(),
              single_op_graph(ctx, "Pow", {{DType::f32, {3, 17}}, {DType::f32, {17}}}),
              {1e-5, 0.5f, 2.f});
  check_group(native_backend(),
              single_op_graph(ctx, "Pow", {{DType::f32, {3, 17}}, {DType::f32, {}}}, nullptr,
                              {Tensor(), Tensor::scalar_f32(2.f)}));
}

TEST_CASE("te_ops: integer arithmetic wraps and divides toward zero", "[te_ops]") {
  Context ctx;
  for (const char* op : {"Add", "Sub", "Mul", "Equal", "Less", "Greater"})
    for (DType t : {DType::i32, DType::i64}) {
      INFO(op << " " << dtype_name(t));
      check_group(native_backend(), single_op_graph(ctx, op, {{t, {3, 19}}, {t, {19}}}));
    }
  Tensor divisor = Tensor::from_i64({4}, std::vector<int64_t>{3, -2, 1, 7});
  check_group(native_backend(),
              single_op_graph(ctx, "Div", {{DType::i64, {5, 4}}, {DType::i64, {4}}}, nullptr,
                              {Tensor(), divisor}));
}

TEST_CASE("te_ops: Pow of an integer base to a float exponent saturates like the reference",
          "[te_ops]") {
  Context ctx;
  // Bases 0 to 4 (random integers), exponents in [-1, 12]: fractions truncate toward zero, and 0
  // to a negative power (infinity) saturates to the type's largest value.
  for (DType t : {DType::i32, DType::i64})
    for (DType e : {DType::f32, DType::f16}) {
      INFO(dtype_name(t) << " ^ " << dtype_name(e));
      check_group(native_backend(), single_op_graph(ctx, "Pow", {{t, {3, 19}}, {e, {19}}}),
                  GroupCheck{.lo = -1.f, .hi = 12.f});
    }
}

TEST_CASE("te_ops: Where, Cast and comparisons on bool", "[te_ops]") {
  Context ctx;
  check_group(
      native_backend(),
      single_op_graph(ctx, "Where",
                      {{DType::boolean, {3, 1, 17}}, {DType::f32, {17}}, {DType::f32, {3, 5, 1}}}));
  for (DType t : {DType::f16, DType::bf16}) {
    INFO("Where on " << dtype_name(t));
    check_group(native_backend(),
                single_op_graph(ctx, "Where",
                                {{DType::boolean, {3, 1, 17}}, {t, {17}}, {t, {3, 5, 1}}}));
  }
  check_group(native_backend(),
              single_op_graph(ctx, "Equal", {{DType::boolean, {33}}, {DType::boolean, {33}}}));
  for (const char* to : {"i32", "i64", "f16", "bf16", "bool", "f32"}) {
    INFO("Cast to " << to);
    auto attrs = make_attrs<CastAttrs>([&](auto& a) { a.to = to; });
    check_group(native_backend(), single_op_graph(ctx, "Cast", {{DType::f32, {3, 37}}}, attrs),
                {1e-5, -4.f, 4.f});
    check_group(native_backend(), single_op_graph(ctx, "Cast", {{DType::i64, {3, 37}}}, attrs));
  }
}
