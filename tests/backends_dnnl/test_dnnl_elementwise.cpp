// dnnl conformance: standalone eltwise operators, binary operators with broadcasting (and their
// post-ops), Concat; and the groups the backend must refuse rather than miscompute.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "common/backend_check.h"
#include "common/test_util.h"
#include "post_op_cases.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("dnnl eltwise: every operator alone", "[dnnl][eltwise]") {
  struct Case {
    std::string op;
    std::shared_ptr<const OpAttrs> attrs;
    float lo = -3.f, hi = 3.f;
    double tolerance = 1e-4;
  };
  const std::vector<Case> cases = {
      {"Relu", nullptr},
      {"LeakyRelu", make_attrs<LeakyReluAttrs>([](auto& a) { a.alpha = 0.1f; })},
      {"Sigmoid", nullptr},
      {"Tanh", nullptr},
      {"Gelu", nullptr},
      {"Gelu", make_attrs<GeluAttrs>([](auto& a) { a.approximate = "tanh"; })},
      {"Clip", make_attrs<ClipAttrs>([](auto& a) {
         a.min = -1.f;
         a.max = 2.f;
       })},
      {"Clip", make_attrs<ClipAttrs>([](auto& a) { a.max = 0.5f; })},
      {"HardSwish", nullptr},
      {"HardSigmoid", make_attrs<HardSigmoidAttrs>([](auto& a) { a.alpha = 0.25f; })},
      {"Exp", nullptr},
      {"Abs", nullptr},
      {"Sqrt", nullptr, 0.f, 4.f},
      // oneDNN's vectorised log is accurate to a few 1e-6 absolute, relative to log(x) ~ 0.
      {"Log", nullptr, 0.1f, 4.f, 1e-3},
      {"Neg", nullptr},
      {"Reciprocal", nullptr, 0.25f, 4.f},
      {"Reciprocal", nullptr, -4.f, -0.25f},
  };
  for (const Case& c : cases) {
    for (const Shape& x : {Shape{7, 9}, Shape{1, 3, 7, 9}, Shape{}}) {
      DYNAMIC_SECTION(c.op << " {" << (c.attrs ? c.attrs->to_string() : std::string()) << "} "
                           << shape_to_string(x) << " in [" << c.lo << ", " << c.hi << ")") {
        TestGraph t;
        Graph g = t.finish(t.op(c.op, {t.input(x, DType::f32, c.lo, c.hi)}, c.attrs));
        CHECK(check_group(dnnl_backend(), g, dnnl_check(t, g, c.tolerance)).origin ==
              "dnnl.eltwise");
      }
    }
  }
}

TEST_CASE("dnnl binary: broadcasting and operand kinds", "[dnnl][binary]") {
  struct Case {
    Shape a, b;
    bool b_constant;
  };
  const std::vector<Case> cases = {
      {{3, 7, 9}, {3, 7, 9}, false},
      {{3, 7, 9}, {9}, false},
      {{3, 7, 9}, {7, 1}, true},
      {{9}, {3, 7, 9}, false},
      {{1, 8, 7, 9}, {1, 8, 1, 1}, true},
      {{3, 7, 9}, {}, true},
      {{}, {}, false},
      {{2, 1, 9}, {2, 7, 9}, false},
      {{3, 1}, {1, 4}, false},
  };
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (const Case& c : cases) {
      DYNAMIC_SECTION(op << " " << shape_to_string(c.a) << " " << shape_to_string(c.b)
                         << (c.b_constant ? " const" : "")) {
        TestGraph t;
        const float lo = std::string(op) == "Div" ? 0.5f : -1.f;
        ValueId b = c.b_constant ? t.constant(c.b, lo, 2.f) : t.input(c.b, DType::f32, lo, 2.f);
        Graph g = t.finish(t.op(op, {t.input(c.a), b}));
        const Shape& out = g.value(g.outputs()[0]).type.shape;
        GroupAttempt r = try_group(dnnl_backend(), g);
        if (c.a == out || c.b == out) {
          CHECK(check_group(dnnl_backend(), g, dnnl_check(t, g)).origin == "dnnl.binary");
        } else {
          // oneDNN broadcasts only its second source.
          CHECK_FALSE(r.offered);
          CHECK_FALSE(r.build.ok());
        }
      }
    }
  }
}

TEST_CASE("dnnl binary: every post-op", "[dnnl][binary]") {
  std::vector<PostOpCase> cases = single_post_ops();
  for (PostOpCase& p : chained_post_ops()) cases.push_back(std::move(p));
  for (const PostOpCase& p : cases) {
    DYNAMIC_SECTION(p.name) {
      TestGraph t;
      ValueId v = t.op("Add", {t.input({1, 4, 7, 9}), t.constant({4, 1, 1})});
      Graph g = t.finish(p.apply(t, v));
      GroupAttempt r = try_group(dnnl_backend(), g);
      // Post-op chains on a binary anchor are at most three long.
      if (g.nodes().size() <= 4) {
        check_post_op_case(t, g, p);
      } else {
        CHECK_FALSE(r.offered);
      }
    }
  }
}

TEST_CASE("dnnl concat: axes, inputs, constants, integers", "[dnnl][concat]") {
  struct Case {
    std::vector<Shape> inputs;
    int64_t axis;
    DType dtype;
  };
  const std::vector<Case> cases = {
      {{{1, 3, 7, 9}, {1, 5, 7, 9}}, 1, DType::f32},
      {{{2, 3}, {4, 3}, {1, 3}}, 0, DType::f32},
      {{{2, 3, 4}, {2, 3, 1}, {2, 3, 2}, {2, 3, 7}}, -1, DType::f32},
      {{{7}, {9}}, 0, DType::f32},
      {{{2, 3}, {2, 5}}, 1, DType::i32},
      {{{2, 3}, {2, 5}}, -1, DType::i8},
  };
  for (const Case& c : cases) {
    for (bool with_constant : {false, true}) {
      DYNAMIC_SECTION(c.inputs.size() << " inputs, axis " << c.axis << ", " << dtype_name(c.dtype)
                                      << (with_constant ? ", one constant" : "")) {
        TestGraph t;
        std::vector<ValueId> in;
        for (size_t i = 0; i < c.inputs.size(); ++i) {
          if (with_constant && i == 1) {
            Tensor k = random_f32(c.inputs[i], 5);
            for (int64_t e = 0; e < k.numel(); ++e) k.data<float>()[e] *= 50.f;
            in.push_back(t.constant(k.cast(c.dtype)));
          } else {
            in.push_back(t.input(c.inputs[i], c.dtype, -50.f, 50.f));
          }
        }
        auto attrs = make_attrs<ConcatAttrs>([&](ConcatAttrs& a) { a.axis = c.axis; });
        Graph g = t.finish(t.op("Concat", in, attrs));
        GroupResult r = check_group(dnnl_backend(), g, dnnl_check(t, g, 0.0));
        CHECK(r.origin == "dnnl.concat");
      }
    }
  }
}

TEST_CASE("dnnl refuses what it cannot compute exactly", "[dnnl][rejections]") {
  SECTION("two eltwise functions of one kind with different parameters") {
    // oneDNN 2.6 would apply LeakyRelu's slope to the Relu as well.
    TestGraph t;
    ValueId conv = t.op("Conv", {t.input({1, 3, 7, 9}), t.constant({4, 3, 3, 3})});
    auto slope = make_attrs<LeakyReluAttrs>([](auto& a) { a.alpha = 0.5f; });
    Graph g = t.finish(t.op("Relu", {t.op("LeakyRelu", {conv}, slope)}));
    GroupAttempt r = try_group(dnnl_backend(), g);
    CHECK_FALSE(r.offered);
    CHECK_THAT(std::string(r.build.message()), Catch::Contains("oneDNN 2.6"));
  }
  SECTION("adjacent linear functions merge instead") {
    TestGraph t;
    ValueId conv = t.op("Conv", {t.input({1, 3, 7, 9}), t.constant({4, 3, 3, 3})});
    auto hs = make_attrs<HardSigmoidAttrs>([](auto& a) { a.alpha = 0.3f; });
    Graph g = t.finish(t.op("HardSigmoid", {t.op("Neg", {conv})}, hs));
    check_group(dnnl_backend(), g, dnnl_check(t, g));
  }
  SECTION("Add with both operands broadcast") {
    TestGraph t;
    Graph g = t.finish(t.op("Add", {t.input({3, 1}), t.input({1, 4})}));
    GroupAttempt r = try_group(dnnl_backend(), g);
    CHECK_FALSE(r.offered);
    CHECK(r.build.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(r.build.message()), Catch::Contains("oneDNN broadcasts only src1"));
  }
  SECTION("Clip with min > max") {
    TestGraph t;
    auto attrs = make_attrs<ClipAttrs>([](auto& a) {
      a.min = 1.f;
      a.max = 0.f;
    });
    Graph g = t.finish(t.op("Clip", {t.input({7, 9})}, attrs));
    GroupAttempt r = try_group(dnnl_backend(), g);
    CHECK_FALSE(r.offered);
    CHECK_THAT(std::string(r.build.message()), Catch::Contains("no kernel"));
  }
  SECTION("Conv with computed weights") {
    TestGraph t;
    Graph g = t.finish(t.op("Conv", {t.input({1, 3, 7, 9}), t.input({4, 3, 3, 3})}));
    GroupAttempt r = try_group(dnnl_backend(), g);
    CHECK_FALSE(r.offered);
    CHECK_THAT(std::string(r.build.message()), Catch::Contains("weights are not a constant"));
  }
  SECTION("integer Add") {
    TestGraph t;
    Graph g = t.finish(t.op("Add", {t.input({7, 9}, DType::i32), t.input({7, 9}, DType::i32)}));
    GroupAttempt r = try_group(dnnl_backend(), g);
    CHECK_FALSE(r.offered);
    CHECK_THAT(std::string(r.build.message()), Catch::Contains("dnnl runs f32"));
  }
  SECTION("an intermediate result used twice") {
    TestGraph t;
    ValueId conv = t.op("Conv", {t.input({1, 3, 7, 9}), t.constant({4, 3, 3, 3})});
    Graph g = t.finish(t.op("Mul", {t.op("Relu", {conv}), conv}));
    GroupAttempt r = try_group(dnnl_backend(), g);
    CHECK_FALSE(r.offered);
    CHECK_FALSE(r.build.ok());
  }
  SECTION("pooling with post-ops") {
    TestGraph t;
    auto attrs = make_attrs<MaxPoolAttrs>([](auto& a) { a.kernel_shape = {2, 2}; });
    Graph g = t.finish(t.op("Relu", {t.op("MaxPool", {t.input({1, 3, 7, 9})}, attrs)}));
    GroupAttempt r = try_group(dnnl_backend(), g);
    CHECK_FALSE(r.offered);
    CHECK_THAT(std::string(r.build.message()), Catch::Contains("takes no post-ops"));
  }
}
