// Canonicalisation: LayerNorm and GELU decompositions become single operators, and near misses
// stay as they are, with the reason.
#include <catch2/catch.hpp>

#include <cmath>

#include "collage/ops.h"
#include "common/test_util.h"
#include "passes/canonicalize.h"
#include "passes/pass_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// How to write the decomposition, and how to spoil it.
struct LayerNormSpec {
  bool scale = true;
  bool bias = true;
  std::vector<int64_t> axes = {-1};
  bool epsilon_input = false;  // epsilon comes from a graph input instead of a constant
  bool extra_reader = false;   // the centred value also feeds a graph output
  bool gamma_first = false;    // Mul(gamma, n) / Add(beta, y) instead of the exported order
};

// x[2x5x8] -> PyTorch's LayerNorm decomposition.
Graph layer_norm_graph(const Context& ctx, const LayerNormSpec& s) {
  GraphBuilder b(ctx, "ln");
  ValueId x = b.add_input("x", {DType::f32, {2, 5, 8}});
  auto mean_attrs = make_attrs<ReduceAttrs>([&](auto& a) { a.axes = s.axes; });
  ValueId mean = add(b, "ReduceMean", {x}, mean_attrs, "mean");
  ValueId d = add(b, "Sub", {x, mean}, nullptr, "centred");
  ValueId sq = add(b, "Pow", {d, scalar(b, "two", 2.f)}, nullptr, "square");
  ValueId var = add(b, "ReduceMean", {sq}, mean_attrs, "var");
  ValueId eps = s.epsilon_input ? b.add_input("eps", {DType::f32, {}}) : scalar(b, "eps", 1e-5f);
  ValueId std_dev = add(b, "Sqrt", {add(b, "Add", {var, eps}, nullptr, "var_eps")}, nullptr, "std");
  ValueId y = add(b, "Div", {d, std_dev}, nullptr, "normalised");
  if (s.scale) {
    ValueId gamma = b.add_constant("gamma", random_f32({8}, 11, 0.5f, 1.5f));
    y = add(b, "Mul", s.gamma_first ? std::vector{gamma, y} : std::vector{y, gamma}, nullptr,
            "scaled");
  }
  if (s.bias) {
    ValueId beta = b.add_constant("beta", random_f32({8}, 12));
    y = add(b, "Add", s.gamma_first ? std::vector{beta, y} : std::vector{y, beta}, nullptr,
            "shifted");
  }
  b.add_output(y);
  if (s.extra_reader) b.add_output(add(b, "Relu", {d}, nullptr, "reader"));
  return finish(b);
}

// Runs canonicalize and collects the failure reasons.
struct Canonicalized {
  std::optional<Graph> graph;
  std::vector<std::string> failures;
};
Canonicalized canonicalize(const Context& ctx, const Graph& g) {
  Canonicalized c;
  passes::RewriteOptions options;
  options.on_failure = [&](const passes::RewritePattern& p, const Node&, std::string_view why) {
    c.failures.push_back(p.name + ": " + std::string(why));
  };
  auto r = passes::canonicalize(ctx, g, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  c.graph = std::move(*r);
  if (c.graph) CHECK(verify_graph(ctx, *c.graph).ok());
  return c;
}

}  // namespace

// Whether any failure reason contains all of `parts`.
bool failed_with(const Canonicalized& c, const std::vector<std::string_view>& parts) {
  for (const std::string& f : c.failures) {
    bool all = true;
    for (std::string_view p : parts) all = all && f.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

TEST_CASE("canonicalize turns the LayerNorm decomposition into LayerNormalization", "[passes]") {
  Context ctx;
  LayerNormSpec spec;
  SECTION("scale and bias") {}
  SECTION("operands in the other order") { spec.gamma_first = true; }
  SECTION("positive axis") { spec.axes = {2}; }
  SECTION("scale only") { spec.bias = false; }
  SECTION("bias only") { spec.scale = false; }
  SECTION("neither") { spec.scale = spec.bias = false; }
  Graph g = layer_norm_graph(ctx, spec);
  Canonicalized c = canonicalize(ctx, g);
  REQUIRE(c.graph);
  const Graph& out = *c.graph;
  REQUIRE(op_names(out) == std::vector<std::string>{"LayerNormalization"});
  const Node& ln = out.node(0);
  CHECK(ln.get<LayerNormalizationAttrs>().axis == -1);
  CHECK(ln.get<LayerNormalizationAttrs>().epsilon == 1e-5f);
  CHECK(ln.inputs.size() == (spec.bias ? 3u : 2u));
  const Tensor* scale = out.constant_of(ln.inputs[1]);
  REQUIRE(scale);
  CHECK(scale->shape() == Shape{8});
  if (spec.scale) CHECK(out.value(ln.inputs[1]).name == "gamma");
  if (!spec.scale) CHECK(scale->get_as_double(7) == 1.0);
  CHECK(out.value(out.outputs()[0]).name == g.value(g.outputs()[0]).name);
  // Only the parameters stay: 2, eps and the other constants of the decomposition are gone.
  CHECK(out.constants().size() == (spec.bias ? 2u : 1u));
  require_same_outputs(g, out);
}

TEST_CASE("canonicalize normalises over several trailing axes", "[passes]") {
  Context ctx;
  LayerNormSpec spec;
  spec.axes = {-2, -1};
  spec.scale = spec.bias = false;
  Graph g = layer_norm_graph(ctx, spec);
  Canonicalized c = canonicalize(ctx, g);
  REQUIRE(c.graph);
  REQUIRE(op_names(*c.graph) == std::vector<std::string>{"LayerNormalization"});
  CHECK(c.graph->node(0).get<LayerNormalizationAttrs>().axis == -2);
  CHECK(c.graph->constant_of(c.graph->node(0).inputs[1])->shape() == Shape{5, 8});
  require_same_outputs(g, *c.graph);
}

TEST_CASE("canonicalize leaves LayerNorm near misses alone", "[passes]") {
  Context ctx;
  LayerNormSpec spec;
  std::vector<std::string_view> reason;
  SECTION("an intermediate value with another reader") {
    spec.extra_reader = true;
    reason = {"'centred'", "'reader'"};
  }
  SECTION("epsilon not constant") {
    spec.epsilon_input = true;
    reason = {"Sqrt 'std'", "constant epsilon"};
  }
  SECTION("axes not trailing") {
    spec.axes = {1};
    reason = {"ReduceMean 'mean'", "trailing axes"};
  }
  Graph g = layer_norm_graph(ctx, spec);
  Canonicalized c = canonicalize(ctx, g);
  CHECK_FALSE(c.graph);
  INFO(c.failures.size() << " failures, first: " << (c.failures.empty() ? "" : c.failures[0]));
  CHECK(failed_with(c, reason));
}

namespace {

enum class GeluForm { half_last, half_first, reciprocal_scale, swapped_operands };

// x[3x7] -> PyTorch's exact GELU decomposition in one of its forms, then Tanh.
Graph gelu_graph(const Context& ctx, GeluForm form, float sqrt2 = 1.4142135f,
                 bool extra_reader = false) {
  GraphBuilder b(ctx, "gelu");
  ValueId x = b.add_input("x", {DType::f32, {3, 7}});
  ValueId scaled = form == GeluForm::reciprocal_scale
                       ? add(b, "Mul", {x, scalar(b, "inv_sqrt2", 0.70710678f)}, nullptr, "scaled")
                       : add(b, "Div", {x, scalar(b, "sqrt2", sqrt2)}, nullptr, "scaled");
  ValueId erf = add(b, "Erf", {scaled}, nullptr, "erf");
  ValueId one = scalar(b, "one", 1.f);
  ValueId term = form == GeluForm::swapped_operands ? add(b, "Add", {one, erf}, nullptr, "term")
                                                    : add(b, "Add", {erf, one}, nullptr, "term");
  ValueId half = scalar(b, "half", 0.5f);
  ValueId y;
  switch (form) {
    case GeluForm::half_first:
      y = add(b, "Mul", {add(b, "Mul", {x, half}, nullptr, "half_x"), term}, nullptr, "gelu");
      break;
    case GeluForm::swapped_operands:
      y = add(b, "Mul", {half, add(b, "Mul", {term, x}, nullptr, "x_term")}, nullptr, "gelu");
      break;
    default:
      y = add(b, "Mul", {add(b, "Mul", {x, term}, nullptr, "x_term"), half}, nullptr, "gelu");
  }
  b.add_output(add(b, "Tanh", {y}, nullptr, "tanh"));
  if (extra_reader) b.add_output(add(b, "Relu", {erf}, nullptr, "reader"));
  return finish(b);
}

}  // namespace

TEST_CASE("canonicalize turns the GELU decomposition into Gelu", "[passes]") {
  const GeluForm form = GENERATE(GeluForm::half_last, GeluForm::half_first,
                                 GeluForm::reciprocal_scale, GeluForm::swapped_operands);
  Context ctx;
  Graph g = gelu_graph(ctx, form);
  Canonicalized c = canonicalize(ctx, g);
  REQUIRE(c.graph);
  const Graph& out = *c.graph;
  REQUIRE(op_names(out) == std::vector<std::string>{"Gelu", "Tanh"});
  CHECK(out.node(0).get<GeluAttrs>().approximate == "none");
  CHECK(out.node(0).inputs[0] == out.inputs()[0]);
  CHECK(out.node(0).name == "gelu");
  CHECK(out.constants().empty());
  require_same_outputs(g, out);
}

TEST_CASE("canonicalize leaves GELU near misses alone", "[passes]") {
  Context ctx;
  SECTION("a divisor that is not sqrt(2)") {
    Canonicalized c = canonicalize(ctx, gelu_graph(ctx, GeluForm::half_last, 1.5f));
    CHECK_FALSE(c.graph);
    CHECK(failed_with(c, {"gelu: ", "Div 'scaled'", "sqrt(2)"}));
  }
  SECTION("the Erf output read twice") {
    Canonicalized c = canonicalize(ctx, gelu_graph(ctx, GeluForm::half_first, 1.4142135f, true));
    CHECK_FALSE(c.graph);
    CHECK(failed_with(c, {"gelu: ", "'erf'", "'reader'"}));
  }
}

TEST_CASE("canonicalize rewrites a transformer block and is deterministic", "[passes]") {
  // LayerNorm -> MatMul -> GELU, twice in a row.
  Context ctx;
  auto build = [&] {
    GraphBuilder b(ctx, "block");
    ValueId h = b.add_input("x", {DType::f32, {4, 8}});
    for (int layer = 0; layer < 2; ++layer) {
      auto mean_attrs = make_attrs<ReduceAttrs>([](auto& a) { a.axes = {-1}; });
      ValueId mean = add(b, "ReduceMean", {h}, mean_attrs);
      ValueId d = add(b, "Sub", {h, mean});
      ValueId var = add(b, "ReduceMean", {add(b, "Pow", {d, scalar(b, "two", 2.f)})}, mean_attrs);
      ValueId sd = add(b, "Sqrt", {add(b, "Add", {var, scalar(b, "eps", 1e-6f)})});
      ValueId n = add(b, "Add", {add(b, "Mul", {add(b, "Div", {d, sd}),
                                                 b.add_constant("g", random_f32({8}, 20 + layer))}),
                                 b.add_constant("b", random_f32({8}, 30 + layer))});
      ValueId m = add(b, "MatMul", {n, b.add_constant("w", random_f32({8, 8}, 40 + layer))});
      ValueId erf = add(b, "Erf", {add(b, "Div", {m, scalar(b, "sqrt2", 1.4142135f)})});
      ValueId t = add(b, "Add", {erf, scalar(b, "one", 1.f)});
      h = add(b, "Mul", {add(b, "Mul", {m, t}), scalar(b, "half", 0.5f)});
    }
    b.add_output(h);
    return finish(b);
  };
  Graph g = build();
  Canonicalized a = canonicalize(ctx, g), b = canonicalize(ctx, build());
  REQUIRE(a.graph);
  REQUIRE(b.graph);
  CHECK(op_names(*a.graph) == std::vector<std::string>{"LayerNormalization", "MatMul", "Gelu",
                                                       "LayerNormalization", "MatMul", "Gelu"});
  CHECK(a.graph->node(0).get<LayerNormalizationAttrs>().epsilon == 1e-6f);
  CHECK(print_graph(*a.graph) == print_graph(*b.graph));
  require_same_outputs(g, *a.graph);
}

TEST_CASE("canonicalize leaves a graph without decompositions unchanged", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  b.add_output(add(b, "Mul", {add(b, "Add", {x, x}), x}));
  Canonicalized c = canonicalize(ctx, finish(b));
  CHECK_FALSE(c.graph);
}
