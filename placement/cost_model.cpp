// Costing candidates in batches by first node, with boundary charges.
#include "placement/cost_model.h"

#include <algorithm>
#include <map>

#include "core/str_cat.h"

namespace collage {

namespace {

bool is_anchor(const Node& n) {
  const std::string_view op = n.op_name();
  return op == "Conv" || op == "MatMul" || op == "Gemm";
}

// The chain of nodes ending at `n` that a fusion rule would group with it: back from `n` along
// the first input whose producer has no other reader, through elementwise and broadcast nodes
// (an epilogue), up to an anchor (a convolution or matmul) or 8 nodes; just {n} when no anchor is
// reached (a Concat or a pooling is a group of its own, not a convolution's epilogue).
NodeSet chain_to(const Graph& g, NodeId n) {
  std::vector<NodeId> chain = {n};
  auto epilogue = [&](NodeId at) {
    const FusionKind k = g.node(at).op->fusion;
    return k == FusionKind::elementwise || k == FusionKind::broadcast;
  };
  for (NodeId at = n; chain.size() < 8 && !is_anchor(g.node(at)) && epilogue(at);) {
    NodeId next = -1;
    for (ValueId in : g.node(at).inputs) {
      if (in == kNoValue || g.value(in).kind != ValueKind::node_output) continue;
      if (g.users()[in].size() == 1) {
        next = g.value(in).producer;
        break;
      }
    }
    if (next < 0) break;
    chain.push_back(next);
    at = next;
  }
  if (!is_anchor(g.node(chain.back()))) chain = {n};
  return NodeSet::of(g.nodes().size(), chain);
}

}  // namespace

std::vector<Layout> measured_layouts(const Context& ctx, const Graph& g, const Candidate& c,
                                     const ExtractedSubgraph& plain, int32_t c_block,
                                     std::map<NodeId, absl::StatusOr<ExtractedSubgraph>>& chains) {
  std::vector<Layout> layouts;
  if (c_block <= 0) return layouts;
  const Layout blocked = Layout::channel_blocked(c_block);
  const Backend& backend = *c.backend;
  auto neighbour = [&](NodeId n) -> const ExtractedSubgraph* {
    auto it = chains.find(n);
    if (it == chains.end()) it = chains.emplace(n, extract_subgraph(ctx, g, chain_to(g, n))).first;
    return it->second.ok() ? &*it->second : nullptr;
  };
  // Whether the backend takes parent value v blocked as an input (or output) of group `s`.
  auto takes = [&](const ExtractedSubgraph& s, ValueId v, bool output) {
    const std::vector<ValueId>& parents = output ? s.parent_outputs : s.parent_inputs;
    const std::vector<ValueId>& mine = output ? s.graph.outputs() : s.graph.inputs();
    auto it = std::find(parents.begin(), parents.end(), v);
    return it != parents.end() &&
           backend.accepts_layout(s.graph, mine[it - parents.begin()], blocked);
  };
  std::vector<bool> is_output(g.values().size(), false);
  for (ValueId v : g.outputs()) is_output[v] = true;
  auto set = [&](ValueId v) {
    if (layouts.empty()) layouts.resize(g.values().size());
    layouts[v] = blocked;
  };
  for (ValueId v : plain.parent_inputs) {
    const Value& value = g.value(v);
    if (value.kind != ValueKind::node_output || !check_layout(blocked, value.type).ok() ||
        !takes(plain, v, false))
      continue;
    const ExtractedSubgraph* producer = neighbour(value.producer);
    bool all = producer && takes(*producer, v, true);
    for (NodeId u : g.users()[v]) {
      if (!all || c.nodes.contains(u)) continue;
      const ExtractedSubgraph* reader = neighbour(u);
      all = reader && takes(*reader, v, false);
    }
    if (all) set(v);
  }
  for (ValueId v : plain.parent_outputs) {
    if (is_output[v] || !check_layout(blocked, g.value(v).type).ok() || !takes(plain, v, true))
      continue;
    bool all = true;
    for (NodeId u : g.users()[v]) {
      if (c.nodes.contains(u)) continue;
      const ExtractedSubgraph* reader = neighbour(u);
      all = all && reader && takes(*reader, v, false);
    }
    if (all) set(v);
  }
  return layouts;
}

void cost_candidates(const Context& ctx, const Graph& g, const CandidateSet& candidates,
                     const std::vector<size_t>& which, CostModel& model,
                     const CostingOptions& options, std::vector<CandidateCost>& costs,
                     const std::function<void(size_t, size_t)>& progress) {
  if (costs.size() < candidates.size()) costs.resize(candidates.size());
  const size_t total = which.size();
  // Batches: the candidates starting at the same node compete in the op-level search. Those of
  // kNodesPerPrefetch consecutive first nodes are measured together, so that the measurer has
  // several kernels of the fallback to compile side by side (ResNet-50: one native candidate
  // per first node, mostly).
  constexpr size_t kNodesPerPrefetch = 4;
  std::map<NodeId, std::vector<size_t>> by_node;
  for (size_t c : which) by_node[candidates[c].nodes.first()].push_back(c);
  std::vector<std::vector<size_t>> batches;
  size_t nodes_in_last = kNodesPerPrefetch;
  for (auto& [node, members] : by_node) {
    if (nodes_in_last == kNodesPerPrefetch) {
      batches.emplace_back();
      nodes_in_last = 0;
    }
    batches.back().insert(batches.back().end(), members.begin(), members.end());
    ++nodes_in_last;
  }
  size_t done = 0;
  std::map<NodeId, absl::StatusOr<ExtractedSubgraph>> chains;
  for (const std::vector<size_t>& members : batches) {
    std::vector<absl::StatusOr<ExtractedSubgraph>> groups;
    std::vector<std::pair<const Candidate*, const ExtractedSubgraph*>> batch;
    groups.reserve(members.size());
    for (size_t c : members) {
      auto plain = extract_subgraph(ctx, g, candidates[c].nodes);
      std::vector<Layout> layouts;
      if (plain.ok())
        layouts = measured_layouts(ctx, g, candidates[c], *plain, options.channel_block, chains);
      groups.push_back(layouts.empty() ? std::move(plain)
                                       : extract_subgraph(ctx, g, candidates[c].nodes, layouts));
    }
    for (size_t i = 0; i < members.size(); ++i)
      if (groups[i].ok()) batch.push_back({&candidates[members[i]], &*groups[i]});
    model.prefetch(batch);
    for (size_t i = 0; i < members.size(); ++i) {
      CandidateCost& out = costs[members[i]];
      out = CandidateCost();
      if (!groups[i].ok()) {
        out.error = str_cat("cannot extract the group: ", groups[i].status().message());
      } else if (auto cost = model.cost(candidates[members[i]], *groups[i]); !cost.ok()) {
        out.error = std::string(cost.status().message());
      } else {
        out.kernel_ms = cost->ms;
        out.samples = cost->samples;
        out.spread = cost->spread;
        out.from_cache = cost->from_cache;
        if (options.charge_boundaries)
          for (ValueId v : groups[i]->parent_inputs)
            if (g.value(v).kind == ValueKind::node_output)
              out.boundary_ms += model.boundary_ms(g.value(v).type);
      }
      if (progress) progress(++done, total);
    }
  }
}

void cost_candidates(const Context& ctx, const Graph& g, const CandidateSet& candidates,
                     size_t first, CostModel& model, const CostingOptions& options,
                     std::vector<CandidateCost>& costs,
                     const std::function<void(size_t, size_t)>& progress) {
  std::vector<size_t> which;
  for (size_t c = first; c < candidates.size(); ++c) which.push_back(c);
  cost_candidates(ctx, g, candidates, which, model, options, costs, progress);
}

std::vector<double> edge_costs(const std::vector<CandidateCost>& costs) {
  std::vector<double> out;
  out.reserve(costs.size());
  for (const CandidateCost& c : costs) out.push_back(c.total());
  return out;
}

std::vector<double> kernel_costs(const std::vector<CandidateCost>& costs) {
  std::vector<double> out;
  out.reserve(costs.size());
  for (const CandidateCost& c : costs) out.push_back(c.kernel_ms);
  return out;
}

std::vector<double> boundary_value_ms(const Graph& g, CostModel& model) {
  std::vector<double> ms(g.values().size(), 0);
  for (size_t v = 0; v < ms.size(); ++v)
    if (g.value(static_cast<ValueId>(v)).kind == ValueKind::node_output && !g.users()[v].empty())
      ms[v] = model.boundary_ms(g.value(static_cast<ValueId>(v)).type);
  return ms;
}

BoundaryCharges boundary_charges(const CandidateSet& candidates, std::vector<double> value_ms) {
  BoundaryCharges charges;
  std::map<const Backend*, int> numbers;
  for (size_t c = 0; c < candidates.size(); ++c)
    charges.backend.push_back(
        numbers.emplace(candidates[c].backend, static_cast<int>(numbers.size())).first->second);
  charges.value_ms = std::move(value_ms);
  return charges;
}

double charged_boundaries(const Graph& g, const CandidateSet& candidates,
                          const BoundaryCharges& charges, const std::vector<size_t>& genes) {
  std::vector<int> owner(g.nodes().size(), -1);
  for (size_t c : genes)
    for (NodeId m : candidates[c].nodes.to_vector()) owner[m] = charges.backend[c];
  double ms = 0;
  for (size_t v = 0; v < g.values().size(); ++v) {
    const Value& value = g.value(static_cast<ValueId>(v));
    if (value.kind != ValueKind::node_output) continue;
    std::vector<int> others;  // the backends reading it from another
    for (NodeId u : g.users()[v])
      if (owner[u] != owner[value.producer] &&
          std::find(others.begin(), others.end(), owner[u]) == others.end())
        others.push_back(owner[u]);
    ms += charges.value_ms[v] * static_cast<double>(others.size());
  }
  return ms;
}

}  // namespace collage
