// Conformance of the TE computes added for ONNX coverage (lib/te_ops/math_ops.cpp with the
// trigonometric and hyperbolic functions, indexing_ops.cpp, norm_extra_ops.cpp, and ReduceMin,
// ArgMin, RMSNormalization in reduction_ops.cpp) against the reference kernels, and the extra
// outputs of LayerNormalization.
#include <catch2/catch.hpp>

#include "collage/ops/elementwise.h"
#include "collage/ops/indexing.h"
#include "collage/ops/math.h"
#include "collage/ops/nn.h"
#include "collage/ops/normalization.h"
#include "collage/ops/trees.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

const std::vector<Shape> kShapes = {{5}, {3, 17}, {3, 41, 37}, {}};

std::shared_ptr<const OpAttrs> alpha(float a) {
  return make_attrs<AlphaAttrs>([a](auto& x) { x.alpha = a; });
}

}  // namespace

TEST_CASE("te_ops: float math and activations with parameters match the reference", "[te_ops]") {
  Context ctx;
  struct Case {
    std::string op;
    std::shared_ptr<const OpAttrs> attrs = nullptr;
  };
  const std::vector<Case> cases = {
      {"Floor"}, {"Ceil"}, {"Round"}, {"Softplus"}, {"Softsign"}, {"Mish"},
      {"Elu", alpha(0.7f)}, {"Celu", alpha(1.3f)}, {"Selu"}, {"ThresholdedRelu", alpha(0.4f)},
      {"Swish", alpha(1.5f)}, {"Sign"},
      {"Shrink", make_attrs<ShrinkAttrs>([](auto& a) { a.lambd = 1.f; a.bias = 0.25f; })}};
  for (const Case& c : cases)
    for (const Shape& s : kShapes)
      for (DType t : {DType::f32, DType::f16}) {
        INFO(c.op << " " << dtype_name(t) << " on " << shape_to_string(s));
        check_group(native_backend(), single_op_graph(ctx, c.op, {{t, s}}, c.attrs),
                    {1e-4, -4.f, 4.f});
      }
  // Integers: Sign and Shrink are exact.
  check_group(native_backend(), single_op_graph(ctx, "Sign", {{DType::i32, {3, 19}}}));
  check_group(native_backend(), single_op_graph(ctx, "Shrink", {{DType::i64, {3, 19}}},
                                                make_attrs<ShrinkAttrs>([](auto& a) {
                                                  a.lambd = 1.5f;
                                                  a.bias = 1.f;
                                                })));
}

TEST_CASE("te_ops: IsNaN, IsInf and the logic operators", "[te_ops]") {
  Context ctx;
  Tensor special = Tensor::from_f32(
      {6}, std::vector<float>{1.f, NAN, INFINITY, -INFINITY, -0.f, 3.5f});
  check_group(native_backend(),
              single_op_graph(ctx, "IsNaN", {{DType::f32, {6}}}, nullptr, {special}));
  for (int pos : {0, 1})
    for (int neg : {0, 1}) {
      INFO("IsInf positive " << pos << " negative " << neg);
      check_group(native_backend(), single_op_graph(ctx, "IsInf", {{DType::f32, {6}}},
                                                    make_attrs<IsInfAttrs>([&](auto& a) {
                                                      a.detect_positive = pos;
                                                      a.detect_negative = neg;
                                                    }),
                                                    {special}));
    }
  check_group(native_backend(), single_op_graph(ctx, "Not", {{DType::boolean, {3, 37}}}));
  for (const char* op : {"And", "Or", "Xor"}) {
    INFO(op);
    check_group(native_backend(),
                single_op_graph(ctx, op, {{DType::boolean, {3, 1, 37}}, {DType::boolean, {5, 1}}}));
  }
}

TEST_CASE("te_ops: comparisons, Mod and the variadic operators broadcast", "[te_ops]") {
  Context ctx;
  for (const char* op : {"GreaterOrEqual", "LessOrEqual"})
    for (DType t : {DType::f32, DType::i64}) {
      INFO(op << " " << dtype_name(t));
      check_group(native_backend(), single_op_graph(ctx, op, {{t, {3, 1, 17}}, {t, {5, 1}}}));
    }
  // Integer Mod with negative divisors and dividends: the divisor's sign, or C's with fmod.
  Tensor divisor = Tensor::from_i64({4}, std::vector<int64_t>{3, -2, 5, -7});
  Tensor dividend = Tensor::from_i64(
      {3, 4}, std::vector<int64_t>{-7, 7, -1, 12, 9, -9, 0, -13, 4, 5, -6, 20});
  for (int64_t fmod : {0, 1}) {
    INFO("Mod fmod " << fmod);
    check_group(native_backend(),
                single_op_graph(ctx, "Mod", {{DType::i64, {3, 4}}, {DType::i64, {4}}},
                                make_attrs<ModAttrs>([&](auto& a) { a.fmod = fmod; }),
                                {dividend, divisor}));
  }
  check_group(native_backend(),
              single_op_graph(ctx, "Mod", {{DType::f32, {3, 17}}, {DType::f32, {17}}},
                              make_attrs<ModAttrs>([](auto& a) { a.fmod = 1; })),
              {1e-5, 0.5f, 4.f});
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    INFO(op);
    check_group(native_backend(), single_op_graph(ctx, op, {{DType::f32, {3, 1, 17}}}));
    check_group(native_backend(),
                single_op_graph(
                    ctx, op, {{DType::f32, {3, 1, 17}}, {DType::f32, {4, 1}}, {DType::f32, {17}}}),
                {1e-5});
  }
  check_group(native_backend(),
              single_op_graph(ctx, "Max", {{DType::i32, {3, 17}}, {DType::i32, {17}}}));
  // NaN propagates through Max and Min.
  Tensor nan = Tensor::from_f32({3}, std::vector<float>{NAN, 1.f, 2.f});
  check_group(native_backend(), single_op_graph(ctx, "Min", {{DType::f32, {3}}, {DType::f32, {3}}},
                                                nullptr, {nan, Tensor()}));
}

TEST_CASE("te_ops: Trilu and EyeLike choose by index", "[te_ops]") {
  Context ctx;
  for (int64_t upper : {0, 1})
    for (int64_t k : {-2, 0, 3}) {
      INFO("Trilu upper " << upper << " k " << k);
      auto attrs = make_attrs<TriluAttrs>([&](auto& a) { a.upper = upper; });
      check_group(native_backend(),
                  single_op_graph(ctx, "Trilu", {{DType::f32, {2, 5, 7}}, {DType::i64, {}}}, attrs,
                                  {Tensor(), Tensor::scalar_i64(k)}));
      // k computed at run time.
      check_group(native_backend(),
                  single_op_graph(ctx, "Trilu", {{DType::i64, {6, 4}}, {DType::i64, {}}}, attrs));
    }
  check_group(native_backend(), single_op_graph(ctx, "Trilu", {{DType::f32, {4, 9}}}));
  for (int64_t k : {-1, 0, 2}) {
    INFO("EyeLike k " << k);
    check_group(native_backend(),
                single_op_graph(ctx, "EyeLike", {{DType::f32, {4, 6}}},
                                make_attrs<EyeLikeAttrs>([&](auto& a) { a.k = k; })));
  }
}

TEST_CASE("te_ops: ReduceMin, ArgMin and RMSNormalization", "[te_ops]") {
  Context ctx;
  for (const std::vector<int64_t>& ax : {std::vector<int64_t>{}, {1}, {0, 2}}) {
    INFO("ReduceMin axes " << ax.size());
    check_group(native_backend(),
                single_op_graph(ctx, "ReduceMin", {{DType::f32, {5, 67, 13}}},
                                make_attrs<ReduceAttrs>([&](auto& a) { a.axes = ax; })));
  }
  for (int64_t axis : {0, -1})
    for (int64_t last : {0, 1}) {
      INFO("ArgMin axis " << axis << " select_last_index " << last);
      check_group(native_backend(), single_op_graph(ctx, "ArgMin", {{DType::i32, {7, 9}}},
                                                    make_attrs<ArgMaxAttrs>([&](auto& a) {
                                                      a.axis = axis;
                                                      a.select_last_index = last;
                                                    })));
    }
  for (int64_t axis : {-1, 1})
    for (const Shape& scale : {Shape{13}, Shape{67, 1}}) {
      if (axis == -1 && scale.size() == 2) continue;
      INFO("RMSNormalization axis " << axis << " scale " << shape_to_string(scale));
      check_group(
          native_backend(),
          single_op_graph(ctx, "RMSNormalization", {{DType::f32, {5, 67, 13}}, {DType::f32, scale}},
                          make_attrs<RMSNormalizationAttrs>([&](auto& a) { a.axis = axis; })),
          {1e-4});
    }
}

TEST_CASE("te_ops: LayerNormalization's Mean and InvStdDev outputs", "[te_ops]") {
  Context ctx;
  for (int64_t axis : {1, -1})
    for (int outputs : {2, 3}) {
      INFO("axis " << axis << ", " << outputs << " outputs");
      auto attrs = make_attrs<LayerNormalizationAttrs>([&](auto& a) { a.axis = axis; });
      const Shape scale = axis == 1 ? Shape{67, 13} : Shape{13};
      check_group(
          native_backend(),
          single_op_graph(ctx, "LayerNormalization",
                          {{DType::f32, {5, 67, 13}}, {DType::f32, scale}}, attrs, {}, outputs),
          {1e-4});
    }
}

TEST_CASE("te_ops: Hardmax and LpNormalization along an axis", "[te_ops]") {
  Context ctx;
  for (int64_t axis : {0, 1, -1}) {
    INFO("axis " << axis);
    check_group(native_backend(),
                single_op_graph(ctx, "Hardmax", {{DType::f32, {5, 67, 13}}},
                                make_attrs<SoftmaxAttrs>([&](auto& a) { a.axis = axis; })));
    for (int64_t p : {1, 2})
      check_group(native_backend(),
                  single_op_graph(ctx, "LpNormalization", {{DType::f32, {5, 67, 13}}},
                                  make_attrs<LpNormalizationAttrs>([&](auto& a) {
                                    a.axis = axis;
                                    a.p = p;
                                  })),
                  {1e-5});
  }
  // Ties: the first maximum wins.
  Tensor ties = Tensor::from_f32({2, 4}, std::vector<float>{1, 3, 3, 0, 2, 2, 2, 2});
  check_group(native_backend(),
              single_op_graph(ctx, "Hardmax", {{DType::f32, {2, 4}}}, nullptr, {ties}));
  // A zero row normalises to zeros.
  check_group(native_backend(),
              single_op_graph(ctx, "LpNormalization", {{DType::f32, {2, 3}}}, nullptr,
                              {Tensor::from_f32({2, 3}, std::vector<float>{0, 0, 0, 1, -2, 2})}));
}

TEST_CASE("te_ops: trigonometric and hyperbolic functions", "[te_ops]") {
  Context ctx;
  struct Case {
    const char* op;
    float lo, hi;  // inside the function's domain
  };
  for (const Case& c : {Case{"Sin", -7.f, 7.f}, Case{"Cos", -7.f, 7.f}, Case{"Tan", -1.4f, 1.4f},
                        Case{"Asin", -1.f, 1.f}, Case{"Acos", -1.f, 1.f}, Case{"Atan", -9.f, 9.f},
                        Case{"Sinh", -4.f, 4.f}, Case{"Cosh", -4.f, 4.f}, Case{"Asinh", -9.f, 9.f},
                        Case{"Acosh", 1.f, 9.f}, Case{"Atanh", -0.99f, 0.99f}}) {
    for (DType t : {DType::f32, DType::f16, DType::f64}) {
      INFO(c.op << " " << dtype_name(t));
      check_group(native_backend(), single_op_graph(ctx, c.op, {{t, {3, 37}}}),
                  {.tolerance = 1e-5, .lo = c.lo, .hi = c.hi, .claim = true});
    }
  }
}

TEST_CASE("te_ops: Det of matrices up to 4 x 4, batched; larger ones refused", "[te_ops]") {
  Context ctx;
  for (const Shape& x : std::vector<Shape>{{1, 1}, {2, 2}, {3, 2, 2}, {2, 3, 3}, {2, 2, 4, 4}}) {
    INFO("Det on " << shape_to_string(x));
    check_group(native_backend(), single_op_graph(ctx, "Det", {{DType::f32, x}}),
                GroupCheck{.tolerance = 1e-4, .lo = -2.f, .hi = 2.f});
  }
  check_group(native_backend(), single_op_graph(ctx, "Det", {{DType::f64, {3, 3, 3}}}));
  auto refused =
      native_backend().build(single_op_graph(ctx, "Det", {{DType::f32, {5, 5}}}), BuildOptions{});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("Det") && Catch::Contains("order 5"));
}
