// assign_layouts: the layout of every value of a placed graph, from what the groups on both sides
// of it accept.
#include <algorithm>
#include <optional>

#include "collage/executor.h"

namespace collage {

int32_t channel_block(const BuildOptions& options) {
  return options.channel_block >= 0 ? options.channel_block : kDefaultChannelBlock;
}

std::vector<Layout> assign_layouts(const Context& ctx, const BackendRegistry& backends,
                                   const Graph& graph, const Placement& placement,
                                   int32_t c_block) {
  std::vector<Layout> layouts(graph.values().size());
  if (c_block <= 0) return layouts;
  const Layout blocked = Layout::channel_blocked(c_block);
  std::vector<int> owner(graph.nodes().size(), -1);
  for (size_t i = 0; i < placement.groups.size(); ++i)
    for (NodeId n : placement.groups[i].nodes.to_vector())
      if (n >= 0 && static_cast<size_t>(n) < owner.size()) owner[n] = static_cast<int>(i);
  // Each group cut out (every layout plain) once, when a value on its boundary is first asked
  // about; a group that cannot be cut out takes nothing blocked (compile_placement reports it).
  std::vector<std::optional<absl::StatusOr<ExtractedSubgraph>>> subs(placement.groups.size());
  // Whether group i's backend takes parent value v, one of the group's inputs or outputs, blocked.
  auto accepts = [&](int i, ValueId v, bool output) {
    const Backend* backend = backends.find(placement.groups[i].backend);
    if (!backend) return false;
    if (!subs[i]) subs[i] = extract_subgraph(ctx, graph, placement.groups[i].nodes);
    if (!subs[i]->ok()) return false;
    const ExtractedSubgraph& s = **subs[i];
    const std::vector<ValueId>& parents = output ? s.parent_outputs : s.parent_inputs;
    const std::vector<ValueId>& mine = output ? s.graph.outputs() : s.graph.inputs();
    auto it = std::find(parents.begin(), parents.end(), v);
    return it != parents.end() && backend->accepts_layout(s.graph, mine[it - parents.begin()], blocked);
  };
  std::vector<bool> is_output(graph.values().size(), false);
  for (ValueId v : graph.outputs()) is_output[v] = true;
  const auto& users = graph.users();
  for (ValueId v = 0; v < static_cast<ValueId>(graph.values().size()); ++v) {
    const Value& value = graph.value(v);
    if (value.kind != ValueKind::node_output || is_output[v] ||
        !check_layout(blocked, value.type).ok())
      continue;
    const int producer = owner[value.producer];
    std::vector<int> readers;
    for (NodeId u : users[v])
      if (owner[u] != producer && owner[u] >= 0) readers.push_back(owner[u]);
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    if (producer < 0 || readers.empty() || !accepts(producer, v, /*output=*/true)) continue;
    if (std::all_of(readers.begin(), readers.end(),
                    [&](int r) { return accepts(r, v, /*output=*/false); }))
      layouts[v] = blocked;
  }
  return layouts;
}

}  // namespace collage
