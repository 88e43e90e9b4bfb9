// Memoised shortest-path search over covered-node sets, with a cycle-free second pass.
#include "placement/op_level_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/str_cat.h"

namespace collage {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct NodeSetHash {
  size_t operator()(const NodeSet& s) const { return static_cast<size_t>(s.hash()); }
};

// Producers of each node's inputs.
std::vector<NodeSet> node_predecessors(const Graph& g) {
  const size_t n = g.nodes().size();
  std::vector<NodeSet> preds;
  preds.reserve(n);
  for (size_t i = 0; i < n; ++i) preds.emplace_back(n);
  for (size_t i = 0; i < n; ++i)
    for (ValueId v : g.node(static_cast<NodeId>(i)).inputs)
      if (v != kNoValue && g.value(v).kind == ValueKind::node_output)
        preds[i].insert(g.value(v).producer);
  return preds;
}

class Search {
 public:
  Search(const Graph& g, const CandidateSet& cands, const std::vector<double>& costs,
         const OpLevelOptions& options, bool ready_order)
      : g_(g), cands_(cands), costs_(costs), options_(options), ready_order_(ready_order) {
    if (ready_order_) {
      preds_ = node_predecessors(g);
      const size_t n = g.nodes().size();
      ext_preds_.assign(cands.size(), NodeSet(n));
      for (size_t c = 0; c < cands.size(); ++c) {
        for (NodeId m : cands[c].nodes.to_vector()) ext_preds_[c] |= preds_[m];
        ext_preds_[c] = ext_preds_[c].minus(cands[c].nodes);
      }
    }
  }

  // Cheapest completion of `start`; the chosen candidates in order.
  absl::StatusOr<std::pair<double, std::vector<size_t>>> run(const NodeSet& start) {
    if (start.first_missing() < 0) return std::pair<double, std::vector<size_t>>{0, {}};
    std::vector<Frame> stack;
    stack.push_back(make_frame(start));
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.pos < f.moves.size()) {
        const size_t c = f.moves[f.pos];
        NodeSet child = f.state | cands_[c].nodes;
        double rest;
        if (child.first_missing() < 0) {
          rest = 0;
        } else {
          auto it = memo_.find(child);
          if (it == memo_.end()) {
            if (memo_.size() + stack.size() >= options_.max_states)
              return absl::ResourceExhaustedError(
                  str_cat("op-level search: more than ", options_.max_states,
                          " states (lower the candidate depth or raise the state limit)"));
            stack.push_back(make_frame(std::move(child)));
            continue;  // come back to this move once the child is solved
          }
          rest = it->second.cost;
        }
        const double total = costs_[c] + rest;
        if (total < f.best) {
          f.best = total;
          f.choice = static_cast<int64_t>(c);
        }
        ++f.pos;
      } else {
        memo_[f.state] = {f.best, f.choice};
        stack.pop_back();
      }
    }
    const Memo& root = memo_.at(start);
    if (!std::isfinite(root.cost)) return absl::NotFoundError("no cover");
    std::vector<size_t> chosen;
    NodeSet state = start;
    while (state.first_missing() >= 0) {
      const Memo& m = memo_.at(state);
      chosen.push_back(static_cast<size_t>(m.choice));
      state |= cands_[static_cast<size_t>(m.choice)].nodes;
    }
    return std::pair<double, std::vector<size_t>>{root.cost, std::move(chosen)};
  }

  size_t states() const { return memo_.size(); }

 private:
  struct Memo {
    double cost;
    int64_t choice;
  };
  struct Frame {
    NodeSet state;
    std::vector<size_t> moves;
    size_t pos = 0;
    double best = kInf;
    int64_t choice = -1;
  };

  bool usable(size_t c) const { return costs_[c] >= 0 && std::isfinite(costs_[c]); }

  Frame make_frame(NodeSet state) const {
    Frame f;
    const NodeId first = state.first_missing();
    if (!ready_order_) {
      // Every candidate containing the first uncovered node starts there (smaller nodes are all
      // covered, so a candidate starting earlier overlaps the state).
      for (size_t c : cands_.starting_at(first))
        if (usable(c) && !cands_[c].nodes.intersects(state)) f.moves.push_back(c);
    } else {
      // Candidates whose inputs are all covered already: their smallest node is uncovered with
      // every predecessor covered.
      const NodeId n = static_cast<NodeId>(g_.nodes().size());
      for (NodeId v = first; v < n; ++v) {
        if (state.contains(v) || !preds_[v].is_subset_of(state)) continue;
        for (size_t c : cands_.starting_at(v))
          if (usable(c) && !cands_[c].nodes.intersects(state) && ext_preds_[c].is_subset_of(state))
            f.moves.push_back(c);
      }
    }
    f.state = std::move(state);
    return f;
  }

  const Graph& g_;
  const CandidateSet& cands_;
  const std::vector<double>& costs_;
  const OpLevelOptions& options_;
  const bool ready_order_;
  std::vector<NodeSet> preds_, ext_preds_;
  std::unordered_map<NodeSet, Memo, NodeSetHash> memo_;
};

// The first node of `g` outside `covered` that no usable candidate disjoint from `covered`
// contains, or -1.
NodeId uncoverable_node(const Graph& g, const CandidateSet& cands, const std::vector<double>& costs,
                        const NodeSet& covered) {
  NodeSet reachable = covered;
  for (size_t c = 0; c < cands.size(); ++c)
    if (costs[c] >= 0 && std::isfinite(costs[c]) && !cands[c].nodes.intersects(covered))
      reachable |= cands[c].nodes;
  return reachable.first_missing();
}

}  // namespace

bool groups_acyclic(const Graph& g, const std::vector<NodeSet>& groups) {
  const size_t n = g.nodes().size();
  std::vector<int> owner(n, -1);
  for (size_t i = 0; i < groups.size(); ++i)
    for (NodeId m : groups[i].to_vector()) owner[m] = static_cast<int>(i);
  std::vector<std::vector<int>> succ(groups.size());
  std::vector<int> indegree(groups.size(), 0);
  const auto& users = g.users();
  for (size_t m = 0; m < n; ++m) {
    for (ValueId out : g.node(static_cast<NodeId>(m)).outputs) {
      for (NodeId u : users[out]) {
        const int a = owner[m], b = owner[u];
        if (a < 0 || b < 0 || a == b) continue;
        succ[a].push_back(b);
        ++indegree[b];
      }
    }
  }
  std::vector<int> ready;
  for (size_t i = 0; i < groups.size(); ++i)
    if (indegree[i] == 0) ready.push_back(static_cast<int>(i));
  size_t done = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    ++done;
    for (int s : succ[i])
      if (--indegree[s] == 0) ready.push_back(s);
  }
  return done == groups.size();
}

absl::StatusOr<OpLevelResult> op_level_search(const Graph& g, const CandidateSet& candidates,
                                              const std::vector<double>& costs,
                                              const std::vector<NodeSet>& fixed,
                                              const OpLevelOptions& options) {
  const size_t n = g.nodes().size();
  NodeSet start(n);
  for (const NodeSet& s : fixed) start |= s;
  if (NodeId bad = uncoverable_node(g, candidates, costs, start); bad >= 0)
    return absl::NotFoundError(str_cat("op-level search: node '", g.node(bad).name, "' (",
                                       g.node(bad).op_name(),
                                       ") has no usable candidate on any selected backend"));
  OpLevelResult result;
  auto groups_of = [&](const std::vector<size_t>& chosen) {
    std::vector<NodeSet> groups = fixed;
    for (size_t c : chosen) groups.push_back(candidates[c].nodes);
    return groups;
  };

  Search first(g, candidates, costs, options, /*ready_order=*/false);
  auto found = first.run(start);
  result.states = first.states();
  if (!found.ok() && found.status().code() != absl::StatusCode::kNotFound) return found.status();
  if (found.ok() && groups_acyclic(g, groups_of(found->second))) {
    result.cost = found->first;
    result.chosen = std::move(found->second);
    return result;
  }
  if (found.ok())
    result.notes.push_back(
        "the cheapest cover had groups depending on each other in a cycle; searched again over "
        "orders in which each group reads only values already computed");
  Search second(g, candidates, costs, options, /*ready_order=*/true);
  auto again = second.run(start);
  result.states += second.states();
  if (!again.ok()) {
    if (again.status().code() == absl::StatusCode::kNotFound)
      return absl::NotFoundError(
          str_cat("op-level search: the candidates of the selected "
                  "backends cannot cover the graph in any runnable order (",
                  n, " nodes)"));
    return again.status();
  }
  result.ready_order = true;
  result.cost = again->first;
  result.chosen = std::move(again->second);
  std::stable_sort(result.chosen.begin(), result.chosen.end(), [&](size_t a, size_t b) {
    return candidates[a].nodes.first() < candidates[b].nodes.first();
  });
  return result;
}

}  // namespace collage
