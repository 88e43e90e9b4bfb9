// The openvino backend's candidate rules.
#include "backends/openvino/openvino_rules.h"

#include <algorithm>

#include "backends/openvino/region_onnx.h"

namespace collage::openvino_backend {
namespace {

bool is_chain_kind(FusionKind k) {
  return k == FusionKind::elementwise || k == FusionKind::broadcast;
}

// The one node reading n's single output, or -1 when its result leaves the chain another way.
NodeId single_user(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (node.outputs.size() != 1) return -1;
  const ValueId v = node.outputs[0];
  if (std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end()) return -1;
  const std::vector<NodeId>& users = g.users()[v];
  if (users.empty()) return -1;
  for (NodeId u : users)
    if (u != users[0]) return -1;
  return users[0];
}

// Whether some value flows between node m and a node of `set`, either way.
bool touches(const Graph& g, const NodeSet& set, NodeId m) {
  for (ValueId in : g.node(m).inputs)
    if (in != kNoValue && g.value(in).kind == ValueKind::node_output &&
        set.contains(g.value(in).producer))
      return true;
  for (ValueId out : g.node(m).outputs)
    for (NodeId u : g.users()[out])
      if (set.contains(u)) return true;
  return false;
}

}  // namespace

std::vector<bool> supported_nodes(const Graph& g) {
  std::vector<bool> out(g.nodes().size(), false);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.node(static_cast<NodeId>(i));
    out[i] = has_onnx_form(n.op_name()) && !n.outputs.empty();
  }
  return out;
}

std::vector<NodeSet> single_nodes(const Graph& g, const std::vector<bool>& supported) {
  std::vector<NodeSet> out;
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
    if (supported[n]) out.push_back(NodeSet::of(g.nodes().size(), {n}));
  return out;
}

std::vector<NodeSet> chains(const Graph& g, const GraphReachability& reach,
                            const RuleOptions& options, const std::vector<bool>& supported) {
  const size_t n = g.nodes().size();
  std::vector<NodeSet> out;
  for (NodeId a = 0; a < static_cast<NodeId>(n); ++a) {
    if (!supported[a]) continue;
    NodeSet set = NodeSet::of(n, {a});
    size_t size = 1;
    for (NodeId cur = a; static_cast<int>(size) < options.max_depth;) {
      const NodeId u = single_user(g, cur);
      if (u < 0 || !supported[u] || !is_chain_kind(g.node(u).op->fusion)) break;
      set.insert(u);
      ++size;
      if (!reach.is_convex(set)) break;
      out.push_back(set);
      cur = u;
    }
  }
  return out;
}

std::vector<NodeSet> regions(const Graph& g, const GraphReachability& reach,
                             const std::vector<bool>& supported) {
  const auto n = static_cast<NodeId>(g.nodes().size());
  std::vector<bool> taken(n, false);
  std::vector<NodeSet> out;
  for (NodeId start = 0; start < n; ++start) {
    if (!supported[start] || taken[start]) continue;
    NodeSet region = NodeSet::of(n, {start});
    for (bool grew = true; grew;) {
      grew = false;
      for (NodeId m = 0; m < n; ++m) {
        if (!supported[m] || taken[m] || region.contains(m) || !touches(g, region, m)) continue;
        NodeSet bigger = region;
        bigger.insert(m);
        if (!reach.is_convex(bigger)) continue;
        region = std::move(bigger);
        grew = true;
      }
    }
    for (NodeId m : region.to_vector()) taken[m] = true;
    if (region.count() > 1) out.push_back(std::move(region));
  }
  return out;
}

void add_openvino_rules(Backend& b) {
  b.add_pattern_rule("openvino.op", [](const Graph& g, const GraphReachability&,
                                       const RuleOptions&) {
    return single_nodes(g, supported_nodes(g));
  });
  b.add_pattern_rule("openvino.chain", [](const Graph& g, const GraphReachability& reach,
                                          const RuleOptions& options) {
    return chains(g, reach, options, supported_nodes(g));
  });
  b.add_pattern_rule("openvino.region", [](const Graph& g, const GraphReachability& reach,
                                           const RuleOptions&) {
    return regions(g, reach, supported_nodes(g));
  });
}

}  // namespace collage::openvino_backend
