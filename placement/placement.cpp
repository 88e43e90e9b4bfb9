// Placement validation (cover, convexity, backends, group order) and the JSON report.
#include "collage/placement.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <queue>

#include "core/str_cat.h"

namespace collage {
namespace {

std::string group_label(const Graph& g, const PlacedGroup& group, size_t index) {
  std::string s = str_cat("group ", index, " (", group.backend.empty() ? "?" : group.backend, ":");
  std::vector<NodeId> nodes =
      group.nodes.universe() == g.nodes().size() ? group.nodes.to_vector() : std::vector<NodeId>{};
  for (size_t i = 0; i < nodes.size() && i < 4; ++i) s += str_cat(" ", g.node(nodes[i]).name);
  if (nodes.size() > 4) s += str_cat(" and ", nodes.size() - 4, " more");
  return s + ")";
}

}  // namespace

absl::StatusOr<PlacementExecutor> parse_executor(std::string_view name) {
  if (name == "waves") return PlacementExecutor::waves;
  if (name == "sequential") return PlacementExecutor::sequential;
  if (name == "auto") return PlacementExecutor::automatic;
  return absl::InvalidArgumentError(
      str_cat("executor '", name, "': expected waves, sequential or auto"));
}

absl::Status validate_placement(const Graph& g, const BackendRegistry& backends, Placement& p) {
  const size_t num_nodes = g.nodes().size();
  std::vector<int> owner(num_nodes, -1);
  GraphReachability reach(g);
  for (size_t i = 0; i < p.groups.size(); ++i) {
    const PlacedGroup& group = p.groups[i];
    const std::string label = group_label(g, group, i);
    if (group.nodes.universe() != num_nodes)
      return absl::InvalidArgumentError(str_cat(label, ": a node set over ", group.nodes.universe(),
                                                " nodes, the graph has ", num_nodes));
    if (group.nodes.empty()) return absl::InvalidArgumentError(str_cat(label, ": no nodes"));
    if (!backends.find(group.backend))
      return absl::InvalidArgumentError(
          str_cat(label, ": no backend named '", group.backend, "' is registered"));
    if (!reach.is_convex(group.nodes))
      return absl::InvalidArgumentError(
          str_cat(label, ": not convex (a path leaves the group and re-enters it)"));
    for (NodeId n : group.nodes.to_vector()) {
      if (owner[n] >= 0)
        return absl::InvalidArgumentError(
            str_cat(label, ": node '", g.node(n).name, "' is also in group ", owner[n]));
      owner[n] = static_cast<int>(i);
    }
  }
  for (size_t n = 0; n < num_nodes; ++n)
    if (owner[n] < 0)
      return absl::InvalidArgumentError(
          str_cat("placement: node '", g.node(n).name, "' is in no group"));

  // Order the groups topologically (ties: smallest first node), so each runs after the groups
  // whose values it reads. A cycle between convex groups means two groups depend on each other.
  const size_t k = p.groups.size();
  std::vector<std::vector<int>> succ(k);
  std::vector<int> indegree(k, 0);
  const auto& users = g.users();
  for (size_t n = 0; n < num_nodes; ++n) {
    for (ValueId out : g.node(static_cast<NodeId>(n)).outputs) {
      for (NodeId u : users[out]) {
        int a = owner[n], b = owner[u];
        if (a == b || std::find(succ[a].begin(), succ[a].end(), b) != succ[a].end()) continue;
        succ[a].push_back(b);
        ++indegree[b];
      }
    }
  }
  using Entry = std::pair<NodeId, int>;  // (first node, group)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t i = 0; i < k; ++i)
    if (indegree[i] == 0) ready.push({p.groups[i].nodes.first(), static_cast<int>(i)});
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top().second;
    ready.pop();
    order.push_back(i);
    for (int s : succ[i])
      if (--indegree[s] == 0) ready.push({p.groups[s].nodes.first(), s});
  }
  if (order.size() != k) {
    for (size_t i = 0; i < k; ++i)
      if (indegree[i] > 0)
        return absl::InvalidArgumentError(
            str_cat(group_label(g, p.groups[i], i),
                    ": groups depend on each other in a cycle (each reads a value the other "
                    "produces)"));
  }
  std::vector<PlacedGroup> sorted;
  sorted.reserve(k);
  for (int i : order) sorted.push_back(std::move(p.groups[i]));
  p.groups = std::move(sorted);
  return absl::OkStatus();
}

std::string Placement::to_json(const Graph& g) const {
  using Json = nlohmann::ordered_json;
  Json j;
  j["strategy"] = strategy;
  j["estimated_ms"] = estimated_ms;
  j["notes"] = notes;
  Json groups = Json::array();
  for (const PlacedGroup& group : this->groups) {
    Json gj;
    gj["backend"] = group.backend;
    gj["origin"] = group.origin;
    Json nodes = Json::array();
    if (group.nodes.universe() == g.nodes().size())
      for (NodeId n : group.nodes.to_vector()) nodes.push_back(g.node(n).name);
    gj["nodes"] = std::move(nodes);
    gj["cost_ms"] = group.cost_ms;
    Json alts = Json::array();
    for (const Alternative& a : group.alternatives)
      alts.push_back(
          {{"backend", a.backend}, {"origin", a.origin}, {"cost_ms", a.cost_ms}, {"note", a.note}});
    gj["alternatives"] = std::move(alts);
    groups.push_back(std::move(gj));
  }
  j["groups"] = std::move(groups);
  return j.dump(2);
}

}  // namespace collage
