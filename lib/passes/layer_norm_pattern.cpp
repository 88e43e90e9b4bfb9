// The LayerNorm rewrite patterns: PyTorch's decomposed layer norm becomes LayerNormalization.
#include <algorithm>

#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ir/attr_inputs.h"
#include "ops/op_util.h"
#include "passes/canonical_patterns.h"

namespace collage::passes {
namespace {

// What a partial match found so far.
struct LayerNormParts {
  ValueId x = kNoValue;
  ValueId scale = kNoValue;  // gamma, when multiplied
  ValueId bias = kNoValue;   // beta, when added
  double epsilon = 0;
  int64_t num_axes = 0;  // the trailing axes normalised over
  std::vector<NodeId> nodes;
};

// The number of trailing axes a keepdims ReduceMean averages over, or 0 when it averages over
// anything else, drops the axes or takes them from a run-time input.
int64_t trailing_axes(const Node& mean, int64_t rank) {
  if (reads_attr_inputs(mean)) return 0;  // axes known only at run time
  const auto& a = mean.get<ReduceAttrs>();
  if (a.keepdims == 0) return 0;
  if (a.axes.empty()) return a.noop_with_empty_axes ? 0 : rank;
  std::vector<int64_t> axes;
  for (int64_t axis : a.axes) {
    auto n = ops::normalize_axis(axis, rank);
    if (!n) return 0;
    axes.push_back(*n);
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const auto k = static_cast<int64_t>(axes.size());
  for (int64_t i = 0; i < k; ++i)
    if (axes[i] != rank - k + i) return 0;
  return k;
}

// div = (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps), both means over the same trailing
// axes. "" on success.
std::string match_normalize(const Graph& g, const Node& div, LayerNormParts& m) {
  const ValueId d = div.inputs[0];
  const Node* sub = producer_of(g, d, "Sub");
  const Node* mean = sub ? producer_of(g, sub->inputs[1], "ReduceMean") : nullptr;
  if (!mean || mean->inputs[0] != sub->inputs[0])
    return failure_at(div, "numerator is not x - ReduceMean(x)");
  const Node* sqrt = producer_of(g, div.inputs[1], "Sqrt");
  if (!sqrt) return failure_at(div, "denominator is not a Sqrt");
  const Node* add = producer_of(g, sqrt->inputs[0], "Add");
  auto eps = add ? constant_operand(g, *add) : std::nullopt;
  std::optional<double> epsilon = eps ? uniform_constant(g, eps->constant) : std::nullopt;
  if (!epsilon) return failure_at(*sqrt, "input is not variance + a constant epsilon");
  const Node* var = producer_of(g, eps->other, "ReduceMean");
  const Node* pow = var ? producer_of(g, var->inputs[0], "Pow") : nullptr;
  if (!pow || pow->inputs[0] != d || !constant_near(g, pow->inputs[1], 2.0, 0.0))
    return failure_at(*add, "does not add epsilon to ReduceMean(Pow(x - mean, 2))");
  const int64_t rank = static_cast<int64_t>(g.value(sub->inputs[0]).type.shape.size());
  const int64_t k = trailing_axes(*mean, rank);
  if (k == 0) return failure_at(*mean, "does not average over trailing axes with keepdims");
  if (trailing_axes(*var, rank) != k)
    return failure_at(*var, "does not average over the same axes as the mean");
  m.x = sub->inputs[0];
  m.epsilon = *epsilon;
  m.num_axes = k;
  for (const Node* n : {mean, sub, pow, var, add, sqrt, &div}) m.nodes.push_back(node_id(g, *n));
  return "";
}

// mul = normalised * gamma with a constant gamma. "" on success.
std::string match_scaled(const Graph& g, const Node& mul, LayerNormParts& m) {
  std::string first_failure;
  for (auto [n, gamma] : operand_orders(mul)) {
    const Node* div = producer_of(g, n, "Div");
    std::string why = !div                   ? failure_at(mul, "operand is not a Div")
                      : !g.constant_of(gamma) ? failure_at(mul, "scale is not a constant")
                                              : match_normalize(g, *div, m);
    if (why.empty()) {
      m.scale = gamma;
      m.nodes.push_back(node_id(g, mul));
      return "";
    }
    if (first_failure.empty()) first_failure = why;
    m = LayerNormParts();
  }
  return first_failure;
}

// add = (normalised [* gamma]) + beta with a constant beta. "" on success.
std::string match_shifted(const Graph& g, const Node& add, LayerNormParts& m) {
  std::string first_failure;
  for (auto [y, beta] : operand_orders(add)) {
    std::string why;
    if (!g.constant_of(beta)) {
      why = failure_at(add, "bias is not a constant");
    } else if (const Node* mul = producer_of(g, y, "Mul")) {
      why = match_scaled(g, *mul, m);
    } else if (const Node* div = producer_of(g, y, "Div")) {
      why = match_normalize(g, *div, m);
    } else {
      why = failure_at(add, "operand is neither a Mul nor a Div");
    }
    if (why.empty()) {
      m.bias = beta;
      m.nodes.push_back(node_id(g, add));
      return "";
    }
    if (first_failure.empty()) first_failure = why;
    m = LayerNormParts();
  }
  return first_failure;
}

// A LayerNormalization parameter: a source constant used as it is, or a new constant.
struct Param {
  ValueId source = kNoValue;
  Tensor made;
};

// Constant `v` (kNoValue: none, giving `fill`) as a parameter of the normalised shape `norm`;
// nullopt when it does not broadcast to `norm` (leading axes of size 1 aside).
std::optional<Param> norm_param(const Graph& g, ValueId v, const Shape& norm, float fill) {
  if (v == kNoValue) {
    Param p{kNoValue, Tensor(DType::f32, norm)};
    std::fill_n(p.made.data<float>(), p.made.numel(), fill);
    return p;
  }
  const Tensor& c = *g.constant_of(v);
  if (c.dtype() != DType::f32) return std::nullopt;
  if (c.shape() == norm) return Param{v, Tensor()};
  Shape shape = c.shape();
  while (shape.size() > norm.size() && shape.front() == 1) shape.erase(shape.begin());
  auto b = ops::broadcast_shapes(shape, norm);
  if (!b || *b != norm) return std::nullopt;
  Param p{kNoValue, Tensor(DType::f32, norm)};
  ops::for_each_broadcast(shape, shape, norm, [&](int64_t i, int64_t, int64_t o) {
    p.made.data<float>()[o] = c.data<float>()[i];
  });
  return p;
}

// The match for the parts found under `root`, once its types and parameters are checked.
MatchResult finish_match(const Graph& g, NodeId root, LayerNormParts m) {
  const Node& node = g.node(root);
  const TensorType& x = g.value(m.x).type;
  if (x.dtype != DType::f32 || x != g.value(node.outputs[0]).type)
    return no_match(failure_at(node, "the result is not f32 of the input's shape"));
  const Shape norm(x.shape.end() - m.num_axes, x.shape.end());
  std::optional<Param> scale = norm_param(g, m.scale, norm, 1.f);
  if (!scale) return no_match(failure_at(node, "scale does not broadcast to the normalised shape"));
  std::optional<Param> bias;
  if (m.bias != kNoValue && !(bias = norm_param(g, m.bias, norm, 0.f)))
    return no_match(failure_at(node, "bias does not broadcast to the normalised shape"));
  auto attrs = make_attrs<LayerNormalizationAttrs>([&](auto& a) {
    a.axis = -m.num_axes;
    a.epsilon = static_cast<float>(m.epsilon);
  });
  RewriteMatch match;
  match.nodes = std::move(m.nodes);
  match.emit = [&g, root, x = m.x, scale = *scale, bias, attrs](GraphRebuilder& rb) {
    const std::string& name = g.node(root).name;
    auto add_param = [&](const Param& p, const char* suffix) {
      if (p.source != kNoValue) return rb.map(p.source);
      return rb.builder().add_constant(str_cat(name, suffix), p.made);
    };
    std::vector<ValueId> inputs = {rb.map(x), add_param(scale, "_scale")};
    if (bias) inputs.push_back(add_param(*bias, "_bias"));
    return rb.add_node_for(root, name, "LayerNormalization", std::move(inputs), attrs).status();
  };
  return {std::move(match), ""};
}

MatchResult match_layer_norm(const Graph& g, NodeId root) {
  const Node& node = g.node(root);
  LayerNormParts m;
  std::string why = node.op_name() == "Add"   ? match_shifted(g, node, m)
                    : node.op_name() == "Mul" ? match_scaled(g, node, m)
                                              : match_normalize(g, node, m);
  if (!why.empty()) return no_match(why);
  return finish_match(g, root, std::move(m));
}

}  // namespace

std::vector<RewritePattern> layer_norm_patterns() {
  return {{"layer_norm_affine", "Add", 1, match_layer_norm},
          {"layer_norm_scaled", "Mul", 1, match_layer_norm},
          {"layer_norm", "Div", 1, match_layer_norm}};
}

}  // namespace collage::passes
