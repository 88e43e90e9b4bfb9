// Conformance of the Eigen backend's elementwise, reduction and softmax kernels against the
// reference executor: every operator, broadcasting forms, chains and odd sizes.
#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/ops.h"
#include "common/test_util.h"
#include "eigen_cases.h"
#include "ops/op_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// True when broadcasting c onto a makes a larger shape than a.
bool broadcast_grows(const Shape& a, const Shape& c) {
  return ops::broadcast_shapes(a, c) != a;
}

Graph finish(GraphBuilder& b, ValueId out) {
  b.add_output(out);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

Graph unary_graph(const Context& ctx, const std::string& op, std::shared_ptr<const OpAttrs> attrs,
                  const Shape& shape) {
  GraphBuilder b(ctx, "unary");
  ValueId x = b.add_input("x", {DType::f32, shape});
  return finish(b, *b.add(op, {x}, attrs));
}

Graph binary_graph(const Context& ctx, const std::string& op, const Shape& a, const Shape& c,
                   bool constant_b) {
  GraphBuilder b(ctx, "binary");
  ValueId x = b.add_input("x", {DType::f32, a});
  ValueId y = constant_b ? b.add_constant("y", random_f32(c, 31, 0.5f, 2.f))
                         : b.add_input("y", {DType::f32, c});
  auto out = b.add(op, {x, y});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return finish(b, *out);
}

struct UnaryCase {
  std::string op;
  std::shared_ptr<const OpAttrs> attrs;
  float lo = -3.f, hi = 3.f;
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"Relu", nullptr},
      {"Sigmoid", nullptr, -20.f, 20.f},
      {"Tanh", nullptr},
      {"Gelu", nullptr, -6.f, 6.f},
      {"Gelu", make_attrs<GeluAttrs>([](GeluAttrs& a) { a.approximate = "tanh"; }), -6.f, 6.f},
      {"Exp", nullptr},
      {"Log", nullptr, 0.1f, 3.f},
      {"Sqrt", nullptr, 0.f, 3.f},
      {"Reciprocal", nullptr, 0.1f, 3.f},
      {"Neg", nullptr},
      {"Abs", nullptr},
      {"Erf", nullptr},
      {"LeakyRelu", make_attrs<LeakyReluAttrs>([](LeakyReluAttrs& a) { a.alpha = 0.1f; })},
      {"HardSigmoid", make_attrs<HardSigmoidAttrs>([](HardSigmoidAttrs& a) { a.alpha = 0.25f; })},
      {"HardSwish", nullptr, -5.f, 5.f},
      {"Clip", make_attrs<ClipAttrs>([](ClipAttrs& a) {
         a.min = -1.f;
         a.max = 2.f;
       })},
      {"Clip", make_attrs<ClipAttrs>([](ClipAttrs& a) {
         a.min = 1.f;
         a.max = -1.f;  // min > max: every element becomes max
       })},
  };
}

}  // namespace

TEST_CASE("eigen elementwise: every unary operator on odd shapes", "[eigen]") {
  Context ctx;
  for (const UnaryCase& c : unary_cases()) {
    for (const Shape& shape : {Shape{3, 5, 7}, Shape{1}, Shape{}, Shape{2001}, Shape{64, 1000}}) {
      INFO(c.op << " {" << (c.attrs ? c.attrs->to_string() : std::string()) << "} on "
                << shape_to_string(shape));
      check_group(eigen_backend(), unary_graph(ctx, c.op, c.attrs, shape),
                  eigen_check(true, c.lo, c.hi));
    }
  }
}

TEST_CASE("eigen elementwise: binary operators with broadcasting", "[eigen]") {
  Context ctx;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{4, 5, 6}, {4, 5, 6}},
      {{4, 5, 6}, {6}},
      {{4, 5, 6}, {}},
      {{4, 5, 6}, {5, 1}},
      {{4, 5, 6}, {4, 1, 6}},
      {{6}, {4, 5, 6}},
      {{4, 1, 6}, {1, 5, 1}},
      {{1}, {3, 1}},
      {{2, 3, 4, 5}, {3, 1, 1}},
      {{300, 257}, {257}},
      {{7}, {7}},
  };
  for (const std::string op : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) {
    for (const auto& [a, c] : shapes) {
      if (op == "PRelu" && broadcast_grows(a, c)) continue;  // the slope must fit X
      for (bool constant_b : {false, true}) {
        INFO(op << " " << shape_to_string(a) << " , " << shape_to_string(c)
                << (constant_b ? " (constant)" : ""));
        // Positive operands keep Pow real; Div by values away from zero stays well scaled.
        check_group(eigen_backend(), binary_graph(ctx, op, a, c, constant_b),
                    eigen_check(true, 0.5f, 2.f));
      }
    }
  }
}

TEST_CASE("eigen elementwise: chains after a unary or binary operator", "[eigen]") {
  Context ctx;
  for (const EpilogueStep& step : epilogue_steps()) {
    INFO("Add(x, y) then " << step.name);
    GraphBuilder b(ctx, "chain");
    ValueId x = b.add_input("x", {DType::f32, {6, 9, 11}});
    ValueId y = b.add_input("y", {DType::f32, {9, 11}});
    ValueId s = *b.add("Add", {x, y});
    check_group(eigen_backend(), finish(b, add_steps(b, s, {6, 9, 11}, {step})), eigen_check());
  }
  GraphBuilder b(ctx, "three");
  ValueId x = b.add_input("x", {DType::f32, {5, 130}});
  ValueId v = *b.add("Neg", {x});
  v = add_steps(b, v, {5, 130},
                {find_step("Add(x,bias)"), find_step("Relu"), find_step("Mul(x,scalar)")});
  check_group(eigen_backend(), finish(b, v), eigen_check());
}

TEST_CASE("eigen reductions: sum, mean and max over adjacent axes", "[eigen]") {
  Context ctx;
  struct ReduceCase {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const std::vector<ReduceCase> cases = {
      {{4, 6, 5}, {-1}},  {{4, 6, 5}, {1, 2}},     {{4, 6, 5}, {0}},       {{4, 6, 5}, {1}},
      {{4, 6, 5}, {}},    {{2, 1, 3, 1}, {1, 2}},  {{2, 3, 1, 4}, {1, 3}}, {{300, 1000}, {1}},
      {{300, 1000}, {0}}, {{8, 64, 7, 7}, {2, 3}}, {{2, 700, 300}, {1}},   {{7}, {0}},
  };
  for (const std::string op : {"ReduceSum", "ReduceMean", "ReduceMax"})
    for (const ReduceCase& c : cases)
      for (int64_t keepdims : {0, 1}) {
        INFO(op << " of " << shape_to_string(c.shape) << " axes " << c.axes.size() << " keepdims "
                << keepdims);
        GraphBuilder b(ctx, "reduce");
        ValueId x = b.add_input("x", {DType::f32, c.shape});
        auto attrs = make_attrs<ReduceAttrs>([&](ReduceAttrs& a) {
          a.axes = c.axes;
          a.keepdims = keepdims;
        });
        check_group(eigen_backend(), finish(b, *b.add(op, {x}, attrs)), eigen_check());
      }
}

TEST_CASE("eigen reductions: non-adjacent axes are not claimed", "[eigen]") {
  Context ctx;
  GraphBuilder b(ctx, "reduce");
  ValueId x = b.add_input("x", {DType::f32, {3, 4, 5}});
  auto attrs = make_attrs<ReduceAttrs>([](ReduceAttrs& a) { a.axes = {0, 2}; });
  const Graph g = finish(b, *b.add("ReduceSum", {x}, attrs));
  CHECK_FALSE(claims_whole_graph(eigen_backend(), g));
  auto built = make_eigen_backend()->build(g, {});
  REQUIRE_FALSE(built.ok());
  CHECK_THAT(std::string(built.status().message()), Catch::Contains("must be adjacent"));
}

TEST_CASE("eigen Softmax and LogSoftmax over any axis", "[eigen]") {
  Context ctx;
  const std::vector<std::pair<Shape, int64_t>> cases = {
      {{3, 4, 5}, -1},   {{3, 4, 5}, 0},     {{3, 4, 5}, 1}, {{1, 10}, 1},
      {{128, 1000}, -1}, {{16, 300, 20}, 1}, {{5}, 0},
  };
  for (const std::string op : {"Softmax", "LogSoftmax"})
    for (const auto& [shape, axis] : cases) {
      INFO(op << " of " << shape_to_string(shape) << " axis " << axis);
      GraphBuilder b(ctx, "softmax");
      ValueId x = b.add_input("x", {DType::f32, shape});
      auto attrs = make_attrs<SoftmaxAttrs>([axis = axis](SoftmaxAttrs& a) { a.axis = axis; });
      check_group(eigen_backend(), finish(b, *b.add(op, {x}, attrs)),
                  eigen_check(false, -10.f, 10.f));
    }
}
