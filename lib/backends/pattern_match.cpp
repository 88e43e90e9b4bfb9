// The pattern matcher: enumerates the ways a pattern binds to the values below a root node and
// keeps the first one whose intermediate values stay inside the match.
#include <algorithm>
#include <set>

#include "backends/pattern_node.h"

namespace collage {
namespace {

// Compares one attribute field (found by name through the attribute visitor) with a value.
class AttrComparer : public AttrVisitor {
 public:
  AttrComparer(const std::string& name, const PatternAttr& value) : name_(name), value_(value) {}
  bool found = false, equal = false;

  void field(const char* n, int64_t& v) override {
    if (!hit(n)) return;
    if (auto* i = std::get_if<int64_t>(&value_))
      equal = *i == v;
    else if (auto* d = std::get_if<double>(&value_))
      equal = *d == static_cast<double>(v);
  }
  void field(const char* n, float& v) override {
    if (!hit(n)) return;
    if (auto* i = std::get_if<int64_t>(&value_))
      equal = static_cast<float>(*i) == v;
    else if (auto* d = std::get_if<double>(&value_))
      equal = static_cast<float>(*d) == v;
  }
  void field(const char* n, std::string& v) override {
    if (!hit(n)) return;
    if (auto* s = std::get_if<std::string>(&value_)) equal = *s == v;
  }
  void field(const char* n, std::vector<int64_t>& v) override {
    if (!hit(n)) return;
    if (auto* l = std::get_if<std::vector<int64_t>>(&value_))
      equal = *l == v;
    else if (auto* d = std::get_if<std::vector<double>>(&value_))
      equal = std::equal(d->begin(), d->end(), v.begin(), v.end(),
                         [](double a, int64_t b) { return a == static_cast<double>(b); });
  }
  void field(const char* n, std::vector<float>& v) override {
    if (!hit(n)) return;
    if (auto* l = std::get_if<std::vector<int64_t>>(&value_))
      equal = std::equal(l->begin(), l->end(), v.begin(), v.end(),
                         [](int64_t a, float b) { return static_cast<float>(a) == b; });
    else if (auto* d = std::get_if<std::vector<double>>(&value_))
      equal = std::equal(d->begin(), d->end(), v.begin(), v.end(),
                         [](double a, float b) { return static_cast<float>(a) == b; });
  }
  void field(const char* n, Tensor&) override { hit(n); }  // tensors never compare equal

 private:
  bool hit(const char* n) {
    if (found || name_ != n) return false;
    found = true;
    return true;
  }
  const std::string& name_;
  const PatternAttr& value_;
};

const Node* producer(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  return val.kind == ValueKind::node_output ? &g.node(val.producer) : nullptr;
}

bool holds(const Graph& g, ValueId v, const PatternPredicate& p) {
  using Kind = PatternPredicate::Kind;
  const TensorType& t = g.value(v).type;
  switch (p.kind) {
    case Kind::dtype:
      return t.dtype == p.dtype;
    case Kind::rank:
      return static_cast<int64_t>(t.shape.size()) == p.rank;
    case Kind::shape:
      if (t.shape.size() != p.shape.size()) return false;
      for (size_t i = 0; i < t.shape.size(); ++i)
        if (p.shape[i] >= 0 && p.shape[i] != t.shape[i]) return false;
      return true;
    case Kind::fusion: {
      const Node* n = producer(g, v);
      return n && n->op->fusion == p.fusion;
    }
    case Kind::attr: {
      const Node* n = producer(g, v);
      if (!n || !n->attrs) return false;
      AttrComparer c(p.attr_name, p.attr_value);
      // The comparer only reads; OpAttrs::visit is non-const because other visitors write.
      const_cast<OpAttrs&>(*n->attrs).visit(c);
      return c.found && c.equal;
    }
  }
  return false;
}

bool all_hold(const Graph& g, ValueId v, const PatternNode& p) {
  for (const PatternPredicate& pred : p.predicates)
    if (!holds(g, v, pred)) return false;
  return true;
}

// One partial way of matching: what each pattern node is bound to.
struct State {
  std::vector<PatternBinding> bindings;
  const PatternBinding* find(const PatternNode* p) const {
    for (const PatternBinding& b : bindings)
      if (b.pattern == p) return &b;
    return nullptr;
  }
};

// Number of inputs a node has once trailing absent optional inputs are dropped.
size_t given_inputs(const Node& n) {
  size_t k = n.inputs.size();
  while (k > 0 && n.inputs[k - 1] == kNoValue) --k;
  return k;
}

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g) {}

  // Every way `p` can match value `v` extending `s`, in pattern order.
  std::vector<State> match(const PatternNode& p, ValueId v, const State& s) const {
    if (const PatternBinding* b = s.find(&p)) {
      if (b->value == v) return {s};
      return {};
    }
    switch (p.kind) {
      case PatternKind::wildcard:
        if (v == kNoValue) {
          if (p.predicates.empty()) return {s};
          return {};
        }
        return all_hold(g_, v, p) ? std::vector<State>{bind(s, p, v, -1)} : std::vector<State>{};
      case PatternKind::constant:
        if (v == kNoValue || !g_.constant_of(v) || !all_hold(g_, v, p)) return {};
        return {bind(s, p, v, -1)};
      case PatternKind::op:
        return match_op(p, v, s);
      case PatternKind::alternative: {
        if (!p.predicates.empty() && (v == kNoValue || !all_hold(g_, v, p))) return {};
        std::vector<State> out = match(*p.first, v, s);
        std::vector<State> more = match(*p.second, v, s);
        out.insert(out.end(), more.begin(), more.end());
        return out;
      }
    }
    return {};
  }

 private:
  static State bind(const State& s, const PatternNode& p, ValueId v, NodeId n) {
    State r = s;
    r.bindings.push_back({&p, v, n});
    return r;
  }

  std::vector<State> match_op(const PatternNode& p, ValueId v, const State& s) const {
    if (v == kNoValue) return {};
    const Value& val = g_.value(v);
    if (val.kind != ValueKind::node_output) return {};
    const Node& node = g_.node(val.producer);
    if (std::find(p.names.begin(), p.names.end(), node.op->name) == p.names.end()) return {};
    if (!all_hold(g_, v, p)) return {};
    State bound = bind(s, p, v, val.producer);
    if (p.any_inputs) return {bound};
    if (given_inputs(node) != p.inputs.size()) return {};
    std::vector<std::vector<size_t>> orders{{}};
    for (size_t i = 0; i < p.inputs.size(); ++i) orders[0].push_back(i);
    if (node.op->commutative && p.inputs.size() >= 2) {
      orders.push_back(orders[0]);
      std::swap(orders[1][0], orders[1][1]);
    }
    std::vector<State> out;
    for (const auto& order : orders) {
      std::vector<State> states{bound};
      for (size_t i = 0; i < p.inputs.size() && !states.empty(); ++i) {
        std::vector<State> next;
        for (const State& st : states) {
          auto r = match(*p.inputs[i], node.inputs[order[i]], st);
          next.insert(next.end(), r.begin(), r.end());
        }
        states = std::move(next);
      }
      out.insert(out.end(), states.begin(), states.end());
    }
    return out;
  }

  const Graph& g_;
};

// Turns a complete binding into a match; nullopt when it leaves the root out or an intermediate
// value escapes.
std::optional<PatternMatch> finish(const Graph& g, NodeId root, const State& s) {
  const size_t n = g.nodes().size();
  NodeSet nodes(n);
  for (const PatternBinding& b : s.bindings)
    if (b.node >= 0) nodes.insert(b.node);
  if (!nodes.contains(root)) return std::nullopt;
  const auto& users = g.users();
  auto is_output = [&](ValueId v) {
    return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
  };
  PatternMatch m;
  std::set<ValueId> seen;
  for (NodeId id : nodes.to_vector()) {
    const Node& node = g.node(id);
    if (id != root) {
      for (ValueId out : node.outputs) {
        if (is_output(out)) return std::nullopt;
        for (NodeId u : users[out])
          if (!nodes.contains(u)) return std::nullopt;
      }
    }
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      const Value& v = g.value(in);
      bool inside = v.kind == ValueKind::node_output && nodes.contains(v.producer);
      if (!inside && seen.insert(in).second) m.inputs.push_back(in);
    }
  }
  m.root = root;
  m.nodes = std::move(nodes);
  m.bindings = s.bindings;
  return m;
}

}  // namespace

ValueId PatternMatch::value_of(const Pattern& p) const {
  for (const PatternBinding& b : bindings)
    if (b.pattern == p.id()) return b.value;
  return kNoValue;
}

NodeId PatternMatch::node_of(const Pattern& p) const {
  for (const PatternBinding& b : bindings)
    if (b.pattern == p.id()) return b.node;
  return -1;
}

std::optional<PatternMatch> match(const Graph& g, const Pattern& pattern, NodeId root) {
  if (root < 0 || root >= static_cast<NodeId>(g.nodes().size())) return std::nullopt;
  Matcher m(g);
  for (ValueId out : g.node(root).outputs) {
    for (const State& s : m.match(*pattern.id(), out, State{})) {
      if (auto r = finish(g, root, s)) return r;
    }
  }
  return std::nullopt;
}

std::vector<PatternMatch> find_matches(const Graph& g, const Pattern& pattern) {
  std::vector<PatternMatch> out;
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
    if (auto m = match(g, pattern, n)) out.push_back(std::move(*m));
  return out;
}

}  // namespace collage
