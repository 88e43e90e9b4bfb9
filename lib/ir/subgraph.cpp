// NodeSet operations, reachability and convexity, subgraph extraction and signatures.
#include "collage/subgraph.h"

#include <bit>
#include <map>

#include "core/str_cat.h"

namespace collage {

NodeSet NodeSet::of(size_t num_nodes, const std::vector<NodeId>& nodes) {
  NodeSet s(num_nodes);
  for (NodeId n : nodes) s.insert(n);
  return s;
}

bool NodeSet::empty() const {
  for (uint64_t w : words_)
    if (w) return false;
  return true;
}

size_t NodeSet::count() const {
  size_t c = 0;
  for (uint64_t w : words_) c += static_cast<size_t>(std::popcount(w));
  return c;
}

NodeId NodeSet::first() const {
  for (size_t i = 0; i < words_.size(); ++i)
    if (words_[i]) return static_cast<NodeId>(i * 64 + std::countr_zero(words_[i]));
  return -1;
}

NodeId NodeSet::first_missing() const {
  for (size_t i = 0; i < words_.size(); ++i) {
    uint64_t inv = ~words_[i];
    if (inv) {
      size_t n = i * 64 + std::countr_zero(inv);
      return n < size_ ? static_cast<NodeId>(n) : -1;
    }
  }
  return -1;
}

bool NodeSet::intersects(const NodeSet& o) const {
  for (size_t i = 0; i < words_.size(); ++i)
    if (words_[i] & o.words_[i]) return true;
  return false;
}

bool NodeSet::is_subset_of(const NodeSet& o) const {
  for (size_t i = 0; i < words_.size(); ++i)
    if (words_[i] & ~o.words_[i]) return false;
  return true;
}

NodeSet& NodeSet::operator|=(const NodeSet& o) {
  for (size_t i = 0; i < words_.size(); ++i) words_[i] |= o.words_[i];
  return *this;
}

NodeSet& NodeSet::operator&=(const NodeSet& o) {
  for (size_t i = 0; i < words_.size(); ++i) words_[i] &= o.words_[i];
  return *this;
}

NodeSet NodeSet::minus(const NodeSet& o) const {
  NodeSet r = *this;
  for (size_t i = 0; i < words_.size(); ++i) r.words_[i] &= ~o.words_[i];
  return r;
}

std::vector<NodeId> NodeSet::to_vector() const {
  std::vector<NodeId> v;
  for (size_t i = 0; i < words_.size(); ++i) {
    uint64_t w = words_[i];
    while (w) {
      v.push_back(static_cast<NodeId>(i * 64 + std::countr_zero(w)));
      w &= w - 1;
    }
  }
  return v;
}

uint64_t NodeSet::hash() const {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t w : words_) {
    h ^= w;
    h *= 1099511628211ull;
  }
  return h;
}

GraphReachability::GraphReachability(const Graph& g) {
  const size_t n = g.nodes().size();
  desc_.assign(n, NodeSet(n));
  const auto& users = g.users();
  // Reverse topological order: a node's descendants are its users and their descendants.
  for (NodeId i = static_cast<NodeId>(n) - 1; i >= 0; --i) {
    for (ValueId out : g.node(i).outputs) {
      for (NodeId u : users[out]) {
        desc_[i].insert(u);
        desc_[i] |= desc_[u];
      }
    }
  }
}

bool GraphReachability::is_convex(const NodeSet& s) const {
  NodeSet reach(s.universe());
  for (NodeId n : s.to_vector()) reach |= desc_[n];
  for (NodeId outside : reach.minus(s).to_vector())
    if (desc_[outside].intersects(s)) return false;
  return true;
}

absl::StatusOr<ExtractedSubgraph> extract_subgraph(const Context& ctx, const Graph& parent,
                                                   const NodeSet& nodes,
                                                   std::span<const Layout> layouts) {
  if (!layouts.empty() && layouts.size() != parent.values().size())
    return absl::InvalidArgumentError(str_cat("extract_subgraph: ", layouts.size(),
                                              " layouts for a graph of ", parent.values().size(),
                                              " values"));
  auto layout_of = [&](ValueId v) { return layouts.empty() ? Layout() : layouts[v]; };
  ExtractedSubgraph out;
  GraphBuilder b(ctx, parent.name() + "_group");
  std::map<ValueId, ValueId> mapped;  // parent value -> subgraph value
  const std::vector<NodeId> members = nodes.to_vector();
  for (NodeId n : members) {
    const Node& node = parent.node(n);
    std::vector<ValueId> ins;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        ins.push_back(kNoValue);
        continue;
      }
      auto it = mapped.find(in);
      if (it == mapped.end()) {
        const Value& v = parent.value(in);
        ValueId nv;
        if (const Tensor* c = parent.constant_of(in)) {
          nv = b.add_constant(v.name, *c);
        } else {
          nv = b.add_input(v.name, v.type);
          b.set_layout(nv, layout_of(in));
          out.parent_inputs.push_back(in);
        }
        it = mapped.emplace(in, nv).first;
      }
      ins.push_back(it->second);
    }
    auto outs = b.add_node(node.op->name, ins, node.attrs, node.name,
                           static_cast<int>(node.outputs.size()));
    if (!outs.ok()) return outs.status();
    for (size_t i = 0; i < node.outputs.size(); ++i) mapped[node.outputs[i]] = (*outs)[i];
  }
  // Outputs: values produced inside and read outside or returned by the parent.
  const auto& users = parent.users();
  std::vector<bool> is_graph_output(parent.values().size(), false);
  for (ValueId v : parent.outputs()) is_graph_output[v] = true;
  for (NodeId n : members) {
    for (ValueId v : parent.node(n).outputs) {
      bool used_outside = is_graph_output[v];
      for (NodeId u : users[v]) used_outside |= !nodes.contains(u);
      if (used_outside) {
        b.add_output(mapped[v]);
        b.set_layout(mapped[v], layout_of(v));
        out.parent_outputs.push_back(v);
      }
    }
  }
  auto g = b.finish();
  if (!g.ok()) return g.status();
  out.graph = std::move(*g);
  return out;
}

namespace {

// "@nChw16c" for a value with a layout other than plain, "" for plain (whose signatures are the
// ones they were before layouts existed, so cost-database records stay valid).
std::string layout_suffix(const Value& v) {
  return v.layout.plain() ? std::string() : "@" + layout_name(v.layout, v.type.shape.size());
}

}  // namespace

std::string canonical_signature(const Graph& g) {
  // Values are numbered by first appearance: inputs, then node outputs in order; constants are
  // described by type only.
  std::map<ValueId, std::string> ids;
  std::string s;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& in = g.value(g.inputs()[i]);
    ids[g.inputs()[i]] = str_cat("i", i);
    s += str_cat("in ", type_to_string(in.type), layout_suffix(in), ";");
  }
  int next = 0;
  for (const Node& n : g.nodes()) {
    s += str_cat(n.op->name, "(");
    for (ValueId in : n.inputs) {
      if (in == kNoValue) {
        s += "_,";
      } else if (g.constant_of(in)) {
        s += str_cat("c:", type_to_string(g.value(in).type), ",");
      } else {
        s += ids[in] + ",";
      }
    }
    s += str_cat("){", n.attrs->to_string(), "}->");
    for (ValueId out : n.outputs) {
      ids[out] = str_cat("v", next++);
      s += str_cat(type_to_string(g.value(out).type), ",");
    }
    s += ";";
  }
  s += "out";
  for (ValueId o : g.outputs()) s += str_cat(" ", ids[o], layout_suffix(g.value(o)));
  return s;
}

uint64_t stable_hash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace collage
