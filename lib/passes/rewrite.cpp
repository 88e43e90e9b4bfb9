// The rewrite driver: finds non-overlapping matches from the outputs back, then rebuilds the graph.
#include "passes/rewrite.h"

#include <algorithm>
#include <cmath>

#include "core/str_cat.h"

namespace collage::passes {
namespace {

// Why `m` cannot be applied as found (nodes already claimed, readers outside the match), or "".
std::string check_match(const Graph& g, NodeId root, const RewriteMatch& m,
                        const std::vector<bool>& claimed) {
  if (std::find(m.nodes.begin(), m.nodes.end(), root) == m.nodes.end() ||
      *std::max_element(m.nodes.begin(), m.nodes.end()) != root)
    return "the root is not the last node of the match";
  for (NodeId n : m.nodes) {
    if (claimed[n])
      return str_cat("node '", g.node(n).name, "' is already part of another rewrite");
    if (n == root) continue;
    for (ValueId out : g.node(n).outputs) {
      const std::string& name = g.value(out).name;
      if (std::find(g.outputs().begin(), g.outputs().end(), out) != g.outputs().end())
        return str_cat("intermediate value '", name, "' is a graph output");
      for (NodeId user : g.users()[out]) {
        if (std::find(m.nodes.begin(), m.nodes.end(), user) == m.nodes.end())
          return str_cat("intermediate value '", name, "' is also read by node '",
                         g.node(user).name, "' outside the match");
      }
    }
  }
  return "";
}

}  // namespace

PassResult apply_rewrites(const Context& ctx, const Graph& g,
                          std::span<const RewritePattern> patterns,
                          const RewriteOptions& options) {
  std::vector<const RewritePattern*> ordered;
  for (const RewritePattern& p : patterns) ordered.push_back(&p);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](auto* a, auto* b) { return a->benefit > b->benefit; });

  const auto num_nodes = static_cast<NodeId>(g.nodes().size());
  std::vector<bool> claimed(num_nodes, false);
  std::vector<std::optional<RewriteMatch>> match_at(num_nodes);
  bool any = false;
  for (NodeId root = num_nodes - 1; root >= 0; --root) {
    if (claimed[root]) continue;
    const Node& node = g.node(root);
    for (const RewritePattern* p : ordered) {
      if (p->root_op != node.op_name()) continue;
      MatchResult r = p->match(g, root);
      if (r.match) r.failure = check_match(g, root, *r.match, claimed);
      if (!r.failure.empty()) {
        if (options.on_failure) options.on_failure(*p, node, r.failure);
        continue;
      }
      for (NodeId n : r.match->nodes) claimed[n] = true;
      match_at[root] = std::move(r.match);
      any = true;
      break;
    }
  }
  if (!any) return std::nullopt;

  GraphRebuilder rb(ctx, g);
  for (NodeId n = 0; n < num_nodes; ++n) {
    if (match_at[n]) {
      if (absl::Status s = match_at[n]->emit(rb); !s.ok()) return s;
      for (ValueId out : g.node(n).outputs)
        if (!rb.has(out))
          return absl::InternalError(failure_at(g.node(n), "its rewrite left an output unmapped"));
    } else if (!claimed[n]) {
      if (absl::Status s = rb.copy_node(n); !s.ok()) return s;
    }
  }
  auto out = rb.finish();
  if (!out.ok()) return out.status();
  return std::optional<Graph>(std::move(*out));
}

const Node* producer_of(const Graph& g, ValueId v, std::string_view op) {
  if (v == kNoValue) return nullptr;
  const Value& val = g.value(v);
  if (val.kind != ValueKind::node_output) return nullptr;
  const Node& n = g.node(val.producer);
  return n.op_name() == op ? &n : nullptr;
}

std::optional<double> uniform_constant(const Graph& g, ValueId v) {
  const Tensor* t = g.constant_of(v);
  if (!t || t->numel() == 0 || t->dtype() == DType::str) return std::nullopt;
  const double first = t->get_as_double(0);
  for (int64_t i = 1; i < t->numel(); ++i)
    if (t->get_as_double(i) != first) return std::nullopt;
  return first;
}

bool constant_near(const Graph& g, ValueId v, double expected, double rel_tol) {
  std::optional<double> c = uniform_constant(g, v);
  return c && std::fabs(*c - expected) <= rel_tol * std::fabs(expected);
}

NodeId node_id(const Graph& g, const Node& n) {
  return static_cast<NodeId>(&n - g.nodes().data());
}

std::vector<std::pair<ValueId, ValueId>> operand_orders(const Node& binary) {
  if (binary.inputs.size() != 2) return {};
  std::vector<std::pair<ValueId, ValueId>> orders = {{binary.inputs[0], binary.inputs[1]}};
  if (binary.op->commutative) orders.emplace_back(binary.inputs[1], binary.inputs[0]);
  return orders;
}

std::optional<ConstantOperand> constant_operand(const Graph& g, const Node& binary) {
  if (binary.inputs.size() != 2) return std::nullopt;
  if (g.constant_of(binary.inputs[1])) return ConstantOperand{binary.inputs[0], binary.inputs[1]};
  if (binary.op->commutative && g.constant_of(binary.inputs[0]))
    return ConstantOperand{binary.inputs[1], binary.inputs[0]};
  return std::nullopt;
}

std::string failure_at(const Node& n, std::string_view why) {
  return str_cat(n.op_name(), " '", n.name, "': ", why);
}

}  // namespace collage::passes
