// Data of the Eigen backend tests: epilogue steps and the group check.
#include "eigen_cases.h"

#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/ops.h"
#include "common/test_util.h"
#include "eigen_module.h"

namespace collage::testing {

const Backend& eigen_backend() {
  static const std::unique_ptr<Backend> backend = make_eigen_backend();
  return *backend;
}

GroupCheck eigen_check(bool elementwise, float lo, float hi) {
  return {.tolerance = 1e-4,
          .lo = lo,
          .hi = hi,
          .seed = 1,
          .elementwise = elementwise,
          .claim = true,
          .threads = {0},
          .module = rt_eigen::module_table()};
}

}  // namespace collage::testing

namespace collage::testing {
namespace {

// A constant of `shape` with values in [lo, hi).
ValueId constant(GraphBuilder& b, const std::string& name, const Shape& shape, float lo, float hi) {
  const uint64_t seed = stable_hash(name + shape_to_string(shape));
  return b.add_constant(name, random_f32(shape, seed, lo, hi));
}

Shape last_dim(const Shape& s) {
  return s.empty() ? Shape{} : Shape{s.back()};
}

EpilogueStep unary(std::string op, std::shared_ptr<const OpAttrs> attrs = nullptr,
                   std::string name = "") {
  if (name.empty()) name = op;
  return {name,
          [op, attrs](GraphBuilder& b, ValueId x, const Shape&) { return *b.add(op, {x}, attrs); }};
}

// x op c, or c op x when `first`, with c a constant of `cshape(shape)`.
EpilogueStep binary(std::string op, std::string name, std::function<Shape(const Shape&)> cshape,
                    bool first, float lo = -1.f, float hi = 1.f) {
  return {name, [=](GraphBuilder& b, ValueId x, const Shape& shape) {
            ValueId c = constant(b, name, cshape(shape), lo, hi);
            return first ? *b.add(op, {c, x}) : *b.add(op, {x, c});
          }};
}

}  // namespace

std::vector<EpilogueStep> activation_steps() {
  return {
      unary("Relu"),
      unary("Sigmoid"),
      unary("Tanh"),
      unary("Gelu"),
      unary("Gelu", make_attrs<GeluAttrs>([](GeluAttrs& a) { a.approximate = "tanh"; }),
            "Gelu(tanh)"),
      unary("Erf"),
      unary("Neg"),
      unary("Abs"),
      unary("LeakyRelu", make_attrs<LeakyReluAttrs>([](LeakyReluAttrs& a) { a.alpha = 0.2f; })),
      unary("HardSigmoid", make_attrs<HardSigmoidAttrs>([](HardSigmoidAttrs& a) {
              a.alpha = 0.3f;
              a.beta = 0.4f;
            })),
      unary("HardSwish"),
      unary("Clip", make_attrs<ClipAttrs>([](ClipAttrs& a) {
              a.min = -0.25f;
              a.max = 0.5f;
            })),
      unary("Exp"),
  };
}

std::vector<EpilogueStep> epilogue_steps() {
  std::vector<EpilogueStep> steps = activation_steps();
  auto chain = [](std::string name, std::string first, std::string second) {
    return EpilogueStep{name, [first, second](GraphBuilder& b, ValueId x, const Shape&) {
                          return *b.add(second, {*b.add(first, {x})});
                        }};
  };
  steps.push_back(chain("Sigmoid,Log", "Sigmoid", "Log"));
  steps.push_back(chain("Exp,Sqrt", "Exp", "Sqrt"));
  steps.push_back(chain("Exp,Reciprocal", "Exp", "Reciprocal"));
  auto scalar = [](const Shape&) { return Shape{}; };
  auto one = [](const Shape&) { return Shape{1}; };
  steps.push_back(binary("Add", "Add(x,bias)", last_dim, false));
  steps.push_back(binary("Add", "Add(bias,x)", last_dim, true));
  steps.push_back(binary("Add", "Add(x,[1])", one, false));
  steps.push_back(binary("Sub", "Sub(x,bias)", last_dim, false));
  steps.push_back(binary("Sub", "Sub(bias,x)", last_dim, true));
  steps.push_back(binary("Mul", "Mul(x,scalar)", scalar, false));
  steps.push_back(binary("Mul", "Mul(scale,x)", last_dim, true));
  steps.push_back(binary("Div", "Div(x,bias)", last_dim, false, 0.5f, 1.5f));
  steps.push_back(binary("Pow", "Pow(x,2)", scalar, false, 2.f, 2.f));
  steps.push_back(binary("Pow", "Pow(base,x)", last_dim, true, 0.5f, 2.f));
  steps.push_back(binary("PRelu", "PRelu(x,slope)", last_dim, false));
  steps.push_back({"Add(x,residual)", [](GraphBuilder& b, ValueId x, const Shape& shape) {
                     ValueId r = b.add_input("residual", {DType::f32, shape});
                     return *b.add("Add", {x, r});
                   }});
  steps.push_back({"Mul(residual,x)", [](GraphBuilder& b, ValueId x, const Shape& shape) {
                     ValueId r = b.add_input("residual", {DType::f32, shape});
                     return *b.add("Mul", {r, x});
                   }});
  return steps;
}

EpilogueStep find_step(const std::string& name) {
  for (EpilogueStep& s : epilogue_steps())
    if (s.name == name) return s;
  FAIL("no epilogue step " << name);
  return {};
}

ValueId add_steps(GraphBuilder& b, ValueId x, const Shape& shape,
                  const std::vector<EpilogueStep>& steps) {
  for (const EpilogueStep& s : steps) x = s.add(b, x, shape);
  return x;
}

}  // namespace collage::testing
