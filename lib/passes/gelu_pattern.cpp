// The GELU rewrite pattern: 0.5 * x * (1 + erf(x / sqrt(2))) becomes Gelu(x).
#include <cmath>
#include <numbers>

#include "core/str_cat.h"
#include "passes/canonical_patterns.h"

namespace collage::passes {
namespace {

// What a partial match found so far.
struct GeluParts {
  ValueId x = kNoValue;
  std::vector<NodeId> nodes;
};

bool near(const Graph& g, ValueId v, double expected) {
  return constant_near(g, v, expected, kPatternConstantTolerance);
}

// v = Add(Erf(x / sqrt(2)), 1), the scaling also written x * (1 / sqrt(2)). "" on success.
std::string match_erf_term(const Graph& g, ValueId v, GeluParts& m) {
  const Node* add = producer_of(g, v, "Add");
  if (!add) return str_cat("'", g.value(v).name, "' is not 1 + erf(.)");
  auto one = constant_operand(g, *add);
  if (!one || !near(g, one->constant, 1.0)) return failure_at(*add, "does not add 1");
  const Node* erf = producer_of(g, one->other, "Erf");
  if (!erf) return failure_at(*add, "does not add 1 to an Erf");
  const ValueId scaled = erf->inputs[0];
  if (const Node* div = producer_of(g, scaled, "Div")) {
    if (!near(g, div->inputs[1], std::numbers::sqrt2))
      return failure_at(*div, "divisor is not sqrt(2)");
    m.x = div->inputs[0];
    m.nodes.push_back(node_id(g, *div));
  } else if (const Node* mul = producer_of(g, scaled, "Mul")) {
    auto c = constant_operand(g, *mul);
    if (!c || !near(g, c->constant, 1 / std::numbers::sqrt2))
      return failure_at(*mul, "factor is not 1/sqrt(2)");
    m.x = c->other;
    m.nodes.push_back(node_id(g, *mul));
  } else {
    return failure_at(*erf, "input is not x / sqrt(2)");
  }
  m.nodes.push_back(node_id(g, *erf));
  m.nodes.push_back(node_id(g, *add));
  return "";
}

// a * b (the root's operands in one order) is one of the two groupings. "" on success.
std::string match_gelu_operands(const Graph& g, ValueId a, ValueId b, GeluParts& m) {
  if (near(g, b, 0.5)) {  // (x * (1 + erf(.))) * 0.5
    const Node* inner = producer_of(g, a, "Mul");
    if (!inner) return str_cat("'", g.value(a).name, "' is not x * (1 + erf(.))");
    std::string first_failure;
    for (auto [x, term] : operand_orders(*inner)) {
      GeluParts t;
      std::string why = match_erf_term(g, term, t);
      if (why.empty() && t.x != x) why = failure_at(*inner, "erf reads another value than x");
      if (why.empty()) {
        m = std::move(t);
        m.nodes.push_back(node_id(g, *inner));
        return "";
      }
      if (first_failure.empty()) first_failure = why;
    }
    return first_failure;
  }
  const Node* half = producer_of(g, a, "Mul");  // (x * 0.5) * (1 + erf(.))
  if (!half) return str_cat("neither '", g.value(a).name, "' nor the other operand is x * 0.5");
  auto c = constant_operand(g, *half);
  if (!c || !near(g, c->constant, 0.5)) return failure_at(*half, "is not x * 0.5");
  if (std::string why = match_erf_term(g, b, m); !why.empty()) return why;
  if (m.x != c->other) return failure_at(*half, "erf reads another value than x");
  m.nodes.push_back(node_id(g, *half));
  return "";
}

MatchResult match_gelu(const Graph& g, NodeId root) {
  const Node& mul = g.node(root);
  std::string first_failure;
  for (auto [a, b] : operand_orders(mul)) {
    GeluParts m;
    std::string why = match_gelu_operands(g, a, b, m);
    if (why.empty()) {
      const TensorType& x = g.value(m.x).type;
      if (!is_float(x.dtype) || x != g.value(mul.outputs[0]).type)
        return no_match(failure_at(mul, "the result's type differs from x's"));
      m.nodes.push_back(root);
      const ValueId input = m.x;
      return {RewriteMatch{std::move(m.nodes),
                           [input, root, &g](GraphRebuilder& rb) {
                             return rb.add_node_for(root, g.node(root).name, "Gelu",
                                                    {rb.map(input)}, nullptr)
                                 .status();
                           }},
              ""};
    }
    if (first_failure.empty()) first_failure = why;
  }
  return no_match(failure_at(mul, first_failure));
}

}  // namespace

std::vector<RewritePattern> gelu_patterns() { return {{"gelu", "Mul", 1, match_gelu}}; }

}  // namespace collage::passes
