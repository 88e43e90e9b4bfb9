// Memoised shortest-path search over covered-node sets, with a cycle-free second pass.
#include "placement/op_level_search.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>

#include "core/str_cat.h"
#include "placement/timing.h"

namespace collage {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

// Who runs a covered node, for the boundary charges: a candidate's backend number, or these.
constexpr int kUncovered = -1;
constexpr int kFixed = -2;  // a node of a fixed group: on a backend of its own

// A state of the search: the covered nodes and, with boundary charges, the backends of the
// covered nodes next to an uncovered one (one byte each, in node order).
struct State {
  NodeSet covered;
  std::string frontier;
  bool operator==(const State& o) const = default;
};

struct StateHash {
  size_t operator()(const State& s) const {
    return static_cast<size_t>(s.covered.hash()) ^ (std::hash<std::string>()(s.frontier) << 1);
  }
};

class Search {
 public:
  Search(const Graph& g, const CandidateSet& cands, const std::vector<double>& costs,
         const OpLevelOptions& options, bool ready_order, const BoundaryCharges* charges)
      : g_(g),
        cands_(cands),
        costs_(costs),
        options_(options),
        ready_order_(ready_order),
        charges_(charges) {
    const size_t n = g.nodes().size();
    if (ready_order_) {
      preds_ = node_predecessors(g);
      ext_preds_.assign(cands.size(), NodeSet(n));
      for (size_t c = 0; c < cands.size(); ++c) {
        for (NodeId m : cands[c].nodes.to_vector()) ext_preds_[c] |= preds_[m];
        ext_preds_[c] = ext_preds_[c].minus(cands[c].nodes);
      }
    }
    if (charges_) index_edges();
  }

  // Cheapest completion of `start` (every node of it on a fixed group); the chosen candidates in
  // order.
  absl::StatusOr<std::pair<double, std::vector<size_t>>> run(const NodeSet& start) {
    if (start.first_missing() < 0) return std::pair<double, std::vector<size_t>>{0, {}};
    std::vector<int> owner(g_.nodes().size(), kUncovered);
    for (NodeId m : start.to_vector()) owner[m] = kFixed;
    const State root = state_of(start, owner);
    std::vector<Frame> stack;
    stack.push_back(make_frame(root, std::move(owner)));
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.pos < f.moves.size()) {
        const size_t c = f.moves[f.pos];
        NodeSet child = f.state.covered | cands_[c].nodes;
        double rest;
        if (child.first_missing() < 0) {
          rest = 0;
        } else {
          std::vector<int> child_owner = owned(f.owner, c);
          State key = state_of(std::move(child), child_owner);
          auto it = memo_.find(key);
          if (it == memo_.end()) {
            if (memo_.size() + stack.size() >= options_.max_states)
              return absl::ResourceExhaustedError(
                  str_cat("op-level search: more than ", options_.max_states,
                          " states (lower the candidate depth or raise the state limit)"));
            if (memo_.size() % 4096 == 0 && now_ms() > options_.deadline_ms)
              return absl::ResourceExhaustedError(
                  str_cat("op-level search: out of time after ", memo_.size(), " states"));
            stack.push_back(make_frame(std::move(key), std::move(child_owner)));
            continue;  // come back to this move once the child is solved
          }
          rest = it->second.cost;
        }
        const double total = edge(c, f.owner) + rest;
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
    const Memo& best = memo_.at(root);
    if (!std::isfinite(best.cost)) return absl::NotFoundError("no cover");
    std::vector<size_t> chosen;
    State state = root;
    owner.assign(g_.nodes().size(), kUncovered);
    for (NodeId m : start.to_vector()) owner[m] = kFixed;
    while (state.covered.first_missing() >= 0) {
      const size_t c = static_cast<size_t>(memo_.at(state).choice);
      chosen.push_back(c);
      owner = owned(owner, c);
      state = state_of(state.covered | cands_[c].nodes, owner);
    }
    return std::pair<double, std::vector<size_t>>{best.cost, std::move(chosen)};
  }

  size_t states() const { return memo_.size(); }

 private:
  struct Memo {
    double cost;
    int64_t choice;
  };
  struct Frame {
    State state;
    std::vector<int> owner;  // per node: kUncovered, kFixed or its candidate's backend
    std::vector<size_t> moves;
    size_t pos = 0;
    double best = kInf;
    int64_t choice = -1;
  };

  bool usable(size_t c) const { return costs_[c] >= 0 && std::isfinite(costs_[c]); }

  // The values candidate c reads from other nodes (with their producer) and those it writes
  // that other nodes read (with those readers), and each node's neighbours: the nodes it reads
  // from, those reading from it, and those reading a value it reads.
  void index_edges() {
    const size_t n = g_.nodes().size();
    neighbours_.assign(n, NodeSet(n));
    for (size_t m = 0; m < n; ++m)
      for (ValueId out : g_.node(static_cast<NodeId>(m)).outputs) {
        const std::vector<NodeId>& readers = g_.users()[out];
        for (NodeId u : readers) {
          neighbours_[m].insert(u);
          neighbours_[u].insert(static_cast<NodeId>(m));
          for (NodeId w : readers) neighbours_[u].insert(w);
        }
      }
    reads_.resize(cands_.size());
    writes_.resize(cands_.size());
    for (size_t c = 0; c < cands_.size(); ++c) {
      if (!usable(c)) continue;
      const NodeSet& nodes = cands_[c].nodes;
      for (NodeId m : nodes.to_vector()) {
        for (ValueId v : g_.node(m).inputs) {
          if (v == kNoValue || g_.value(v).kind != ValueKind::node_output) continue;
          const NodeId p = g_.value(v).producer;
          if (nodes.contains(p) || std::any_of(reads_[c].begin(), reads_[c].end(),
                                               [&](const auto& r) { return r.first == v; }))
            continue;
          reads_[c].push_back({v, p});
        }
        for (ValueId v : g_.node(m).outputs) {
          std::vector<NodeId> readers;
          for (NodeId u : g_.users()[v])
            if (!nodes.contains(u)) readers.push_back(u);
          if (!readers.empty()) writes_[c].push_back({v, std::move(readers)});
        }
      }
    }
  }

  // Candidate c's cost added to a state whose nodes `owner` says who runs: its kernel, and with
  // charges each (value, backend reading it from another) pair it completes: a value it reads
  // from a covered producer on another backend that no covered reader on its backend reads yet,
  // and a value it writes once per other backend among its covered readers.
  double edge(size_t c, const std::vector<int>& owner) const {
    double ms = costs_[c];
    if (!charges_) return ms;
    const int b = charges_->backend[c];
    const NodeSet& nodes = cands_[c].nodes;
    for (const auto& [v, p] : reads_[c]) {
      if (owner[p] == kUncovered || owner[p] == b) continue;
      const std::vector<NodeId>& readers = g_.users()[v];
      if (std::none_of(readers.begin(), readers.end(),
                       [&](NodeId u) { return !nodes.contains(u) && owner[u] == b; }))
        ms += charges_->value_ms[v];
    }
    for (const auto& [v, readers] : writes_[c]) {
      std::vector<int> others;
      for (NodeId u : readers)
        if (owner[u] != kUncovered && owner[u] != b &&
            std::find(others.begin(), others.end(), owner[u]) == others.end())
          others.push_back(owner[u]);
      ms += charges_->value_ms[v] * static_cast<double>(others.size());
    }
    return ms;
  }

  // `owner` with candidate c's nodes on its backend; without charges nothing is tracked (empty).
  std::vector<int> owned(const std::vector<int>& owner, size_t c) const {
    if (!charges_) return {};
    std::vector<int> out = owner;
    for (NodeId m : cands_[c].nodes.to_vector()) out[m] = charges_->backend[c];
    return out;
  }

  State state_of(NodeSet covered, const std::vector<int>& owner) const {
    State s{std::move(covered), {}};
    if (!charges_) return s;
    NodeSet uncovered(g_.nodes().size());
    for (size_t m = 0; m < g_.nodes().size(); ++m)
      if (!s.covered.contains(static_cast<NodeId>(m))) uncovered.insert(static_cast<NodeId>(m));
    for (NodeId m : s.covered.to_vector())
      if (neighbours_[m].intersects(uncovered)) s.frontier.push_back(static_cast<char>(owner[m]));
    return s;
  }

  Frame make_frame(State state, std::vector<int> owner) const {
    Frame f;
    const NodeSet& covered = state.covered;
    const NodeId first = covered.first_missing();
    if (!ready_order_) {
      // Every candidate containing the first uncovered node starts there (smaller nodes are all
      // covered, so a candidate starting earlier overlaps the state).
      for (size_t c : cands_.starting_at(first))
        if (usable(c) && !cands_[c].nodes.intersects(covered)) f.moves.push_back(c);
    } else {
      // Candidates whose inputs are all covered already: their smallest node is uncovered with
      // every predecessor covered.
      const NodeId n = static_cast<NodeId>(g_.nodes().size());
      for (NodeId v = first; v < n; ++v) {
        if (covered.contains(v) || !preds_[v].is_subset_of(covered)) continue;
        for (size_t c : cands_.starting_at(v))
          if (usable(c) && !cands_[c].nodes.intersects(covered) &&
              ext_preds_[c].is_subset_of(covered))
            f.moves.push_back(c);
      }
    }
    f.state = std::move(state);
    f.owner = std::move(owner);
    return f;
  }

  const Graph& g_;
  const CandidateSet& cands_;
  const std::vector<double>& costs_;
  const OpLevelOptions& options_;
  const bool ready_order_;
  const BoundaryCharges* charges_;
  std::vector<NodeSet> preds_, ext_preds_;
  std::vector<NodeSet> neighbours_;
  std::vector<std::vector<std::pair<ValueId, NodeId>>> reads_;
  std::vector<std::vector<std::pair<ValueId, std::vector<NodeId>>>> writes_;
  std::unordered_map<State, Memo, StateHash> memo_;
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
                                              const OpLevelOptions& options,
                                              const BoundaryCharges* charges) {
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

  Search first(g, candidates, costs, options, /*ready_order=*/false, charges);
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
  Search second(g, candidates, costs, options, /*ready_order=*/true, charges);
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
