// The `single:NAME` and `greedy` baseline placements (BYOC's annotate -> merge -> partition).
#include "placement/baselines.h"

#include <algorithm>
#include <numeric>

#include "collage/executor.h"
#include "core/str_cat.h"

namespace collage {
namespace {

// Groups claimed so far; every node not yet claimed counts as a group of its own.
class Claims {
 public:
  explicit Claims(const Graph& g) : g_(g), owner_(g.nodes().size(), -1) {
    const auto& users = g.users();
    succ_.resize(g.nodes().size());
    for (const Node& n : g.nodes()) {
      NodeId id = static_cast<NodeId>(&n - g.nodes().data());
      for (ValueId out : n.outputs)
        for (NodeId u : users[out]) succ_[id].push_back(u);
    }
  }

  bool overlaps(const NodeSet& nodes) const {
    for (NodeId n : nodes.to_vector())
      if (owner_[n] >= 0) return true;
    return false;
  }

  // True when some path leaves `nodes` and comes back, where reaching any node of a claimed
  // group lets the path continue from every node of that group (the group runs as one kernel).
  // With `nodes` convex in the graph this is exactly "adding it makes the group order cyclic".
  bool closes_cycle(const NodeSet& nodes) const {
    NodeSet seen(g_.nodes().size());
    std::vector<NodeId> stack;
    auto push = [&](NodeId x) {
      if (seen.contains(x)) return;
      seen.insert(x);
      stack.push_back(x);
    };
    for (NodeId n : nodes.to_vector())
      for (NodeId u : succ_[n])
        if (!nodes.contains(u)) push(u);
    while (!stack.empty()) {
      NodeId x = stack.back();
      stack.pop_back();
      if (owner_[x] >= 0 && !nodes.contains(x))
        for (NodeId y : groups_[owner_[x]].nodes.to_vector()) push(y);
      for (NodeId u : succ_[x]) {
        if (nodes.contains(u)) return true;
        push(u);
      }
    }
    return false;
  }

  bool try_claim(const NodeSet& nodes, const std::string& backend, const std::string& origin) {
    if (nodes.empty() || overlaps(nodes) || closes_cycle(nodes)) return false;
    PlacedGroup group;
    group.nodes = nodes;
    group.backend = backend;
    group.origin = origin;
    for (NodeId n : nodes.to_vector()) owner_[n] = static_cast<int>(groups_.size());
    groups_.push_back(std::move(group));
    return true;
  }

  // Candidates of one backend: the maximal ones first, then the others where they still fit;
  // each pass in topological order of first nodes, larger candidates first.
  void claim_candidates(const std::vector<Candidate>& cands, const std::string& backend) {
    std::vector<bool> maximal(cands.size(), true);
    for (size_t i = 0; i < cands.size(); ++i)
      for (size_t j = 0; j < cands.size() && maximal[i]; ++j)
        if (i != j && cands[j].nodes.count() > cands[i].nodes.count() &&
            cands[i].nodes.is_subset_of(cands[j].nodes))
          maximal[i] = false;
    std::vector<size_t> order(cands.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      NodeId fa = cands[a].nodes.first(), fb = cands[b].nodes.first();
      if (fa != fb) return fa < fb;
      return cands[a].nodes.count() > cands[b].nodes.count();
    });
    for (bool pass_maximal : {true, false})
      for (size_t i : order)
        if (maximal[i] == pass_maximal) try_claim(cands[i].nodes, backend, cands[i].origin);
  }

  // MergeCompilerRegions: joins groups of `backend` that feed one another while no cycle forms.
  void merge_regions(const std::string& backend) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t a = 0; a < groups_.size() && !changed; ++a) {
        if (groups_[a].backend != backend || groups_[a].nodes.empty()) continue;
        for (NodeId n : groups_[a].nodes.to_vector()) {
          for (NodeId u : succ_[n]) {
            int b = owner_[u];
            if (b < 0 || b == static_cast<int>(a) || groups_[b].backend != backend) continue;
            NodeSet merged = groups_[a].nodes | groups_[b].nodes;
            if (closes_cycle(merged)) continue;
            for (NodeId m : groups_[b].nodes.to_vector()) owner_[m] = static_cast<int>(a);
            groups_[a].nodes = std::move(merged);
            groups_[a].origin += "+" + groups_[b].origin;
            groups_[b].nodes = NodeSet(g_.nodes().size());
            changed = true;
            break;
          }
          if (changed) break;
        }
      }
    }
  }

  // The first node no group claimed, or -1 when every node is claimed.
  NodeId first_unclaimed() const {
    for (NodeId n = 0; n < static_cast<NodeId>(g_.nodes().size()); ++n)
      if (owner_[n] < 0) return n;
    return -1;
  }

  size_t claimed_by(const std::string& backend) const {
    size_t c = 0;
    for (const PlacedGroup& grp : groups_)
      if (grp.backend == backend) c += grp.nodes.count();
    return c;
  }

  std::vector<PlacedGroup> take_groups() {
    std::vector<PlacedGroup> out;
    for (PlacedGroup& grp : groups_)
      if (!grp.nodes.empty()) out.push_back(std::move(grp));
    return out;
  }

 private:
  const Graph& g_;
  std::vector<int> owner_;
  std::vector<std::vector<NodeId>> succ_;
  std::vector<PlacedGroup> groups_;
};

// Why node `n`, which no claimed group holds, runs on none of the backends that took part, each
// with the candidates it offered: a backend proposes a node only where it can build it, so
// handing the node to one that did not propose it would fail later, at its build.
absl::Status unplaced(const Graph& g, NodeId n,
                      const std::vector<std::pair<const Backend*, std::vector<Candidate>>>& offers,
                      std::string_view strategy) {
  const Node& node = g.node(n);
  std::string types;
  for (ValueId v : node.inputs)
    if (v != kNoValue) types += str_cat(types.empty() ? "" : ", ", type_to_string(g.value(v).type));
  std::string considered, conflicting;
  for (const auto& [backend, cands] : offers) {
    considered += str_cat(considered.empty() ? "" : ", ", backend->name());
    for (const Candidate& c : cands)
      if (c.nodes.contains(n)) {
        conflicting += str_cat(conflicting.empty() ? "" : ", ", backend->name(), " (", c.origin,
                               ": ", c.nodes.count(), " nodes)");
        break;
      }
  }
  const std::string why =
      conflicting.empty()
          ? str_cat("no backend proposes it (", considered, ")")
          : str_cat("the groups proposed with it, on ", conflicting,
                    ", overlap groups claimed before or would make groups depend on each other");
  return absl::NotFoundError(str_cat(strategy, ": ", node.op_name(), " '", node.name, "' (", types,
                                     ") runs on no selected backend: ", why));
}

absl::StatusOr<const Backend*> find_backend(const BackendRegistry& backends, std::string_view name,
                                            std::string_view role) {
  const Backend* b = backends.find(name);
  if (!b)
    return absl::InvalidArgumentError(str_cat(role, " backend '", name, "' is not registered"));
  return b;
}

// Claims for each of `order`, then the fallback, and validates the result.
absl::StatusOr<Placement> place(const Graph& g, const BackendRegistry& backends,
                                const std::vector<const Backend*>& order, std::string strategy,
                                const BaselineOptions& options) {
  auto fallback = find_backend(backends, options.fallback, "fallback");
  if (!fallback.ok()) return fallback.status();
  GraphReachability reach(g);
  Claims claims(g);
  Placement p;
  p.strategy = std::move(strategy);
  std::vector<std::pair<const Backend*, std::vector<Candidate>>> offers;
  for (const Backend* b : order) {
    offers.emplace_back(b, b->candidates(g, reach, options.rules));
    claims.claim_candidates(offers.back().second, b->name());
    if (options.merge_regions) claims.merge_regions(b->name());
    p.notes.push_back(str_cat(b->name(), " claimed ", claims.claimed_by(b->name()), " of ",
                              g.nodes().size(), " nodes"));
  }
  const std::string& fb = (*fallback)->name();
  offers.emplace_back(*fallback, (*fallback)->candidates(g, reach, options.rules));
  claims.claim_candidates(offers.back().second, fb);
  // The fallback takes what the others leave only where it proposes it: a node no backend
  // proposes is an error here, naming it, rather than a failed build of the fallback later.
  if (NodeId n = claims.first_unclaimed(); n >= 0) return unplaced(g, n, offers, p.strategy);
  p.notes.push_back(str_cat("fallback ", fb, " runs ", claims.claimed_by(fb), " nodes"));
  p.groups = claims.take_groups();
  absl::Status s = validate_placement(g, backends, p);
  if (!s.ok()) return s;
  return p;
}

}  // namespace

absl::StatusOr<Placement> place_single(const Graph& g, const BackendRegistry& backends,
                                       std::string_view backend, const BaselineOptions& options) {
  auto b = find_backend(backends, backend, "single:");
  if (!b.ok()) return b.status();
  std::vector<const Backend*> order;
  if ((*b)->name() != options.fallback) order.push_back(*b);
  return place(g, backends, order, str_cat("single:", backend), options);
}

absl::StatusOr<Placement> place_greedy(const Graph& g, const BackendRegistry& backends,
                                       const BaselineOptions& options) {
  // The reference backend claims nothing unless it is the fallback: it defines what a graph
  // means and is never a BYOC target.
  std::vector<const Backend*> order;
  for (const Backend* b : backends.all()) {
    const bool selected = options.backends.empty() ||
                          std::find(options.backends.begin(), options.backends.end(),
                                    b->name()) != options.backends.end();
    if (selected && b->name() != options.fallback && b->name() != kReferenceBackend)
      order.push_back(b);
  }
  return place(g, backends, order, "greedy", options);
}

absl::StatusOr<Placement> place_baseline(std::string_view strategy, const Graph& g,
                                         const BackendRegistry& backends,
                                         const BaselineOptions& options) {
  if (strategy == "greedy") return place_greedy(g, backends, options);
  if (strategy.substr(0, 7) == "single:" && strategy.size() > 7)
    return place_single(g, backends, strategy.substr(7), options);
  return absl::InvalidArgumentError(
      str_cat("unknown baseline strategy '", strategy, "' (expected greedy or single:NAME)"));
}

}  // namespace collage
