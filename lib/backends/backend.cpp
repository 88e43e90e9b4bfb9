// Backend pattern and rule registration, candidate generation, and the backend registry.
#include "collage/backend.h"

#include <set>

#include "core/str_cat.h"
#include "ir/attr_inputs.h"

namespace collage {

std::string_view device_kind_name(DeviceKind d) {
  switch (d) {
    case DeviceKind::cpu:
      return "cpu";
    case DeviceKind::cuda:
      return "cuda";
  }
  return "?";
}

void Backend::add_pattern(std::string name, Pattern pattern, PatternCheck check) {
  patterns_.push_back({std::move(name), std::move(pattern), std::move(check)});
}

void Backend::add_pattern_rule(std::string name, PatternRule rule) {
  rules_.push_back({std::move(name), std::move(rule)});
}

namespace {

// Nodes reading or writing a value with a dynamic dimension, or taking an attribute from a
// run-time input (a static backend's kernel would read the attribute, not the input).
std::vector<bool> dynamic_nodes(const Graph& g) {
  std::vector<bool> dynamic(g.nodes().size(), false);
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
    dynamic[n] = reads_attr_inputs(g.node(n));
    for (ValueId v : g.node(n).inputs)
      if (v != kNoValue && g.value(v).type.is_dynamic()) dynamic[n] = true;
    for (ValueId v : g.node(n).outputs)
      if (g.value(v).type.is_dynamic()) dynamic[n] = true;
  }
  return dynamic;
}

}  // namespace

std::vector<Candidate> Backend::candidates(const Graph& g, const GraphReachability& reach,
                                           const RuleOptions& options) const {
  std::vector<Candidate> out;
  std::set<NodeSet> seen;
  const std::vector<bool> dynamic =
      supports_dynamic_shapes() ? std::vector<bool>() : dynamic_nodes(g);
  auto has_dynamic = [&](const NodeSet& nodes) {
    for (size_t n = 0; n < dynamic.size(); ++n)
      if (dynamic[n] && nodes.contains(static_cast<NodeId>(n))) return true;
    return false;
  };
  auto offer = [&](NodeSet nodes, const std::string& origin) {
    if (nodes.empty() || nodes.universe() != g.nodes().size() || has_dynamic(nodes)) return;
    if (!reach.is_convex(nodes) || !seen.insert(nodes).second) return;
    out.push_back({std::move(nodes), this, origin});
  };
  for (const PatternEntry& p : patterns_) {
    for (PatternMatch& m : find_matches(g, p.pattern)) {
      // Checks look at shapes: a match holding a dynamic one is dropped first.
      if (has_dynamic(m.nodes) || (p.check && !p.check(g, m).ok())) continue;
      offer(std::move(m.nodes), p.name);
    }
  }
  for (const RuleEntry& r : rules_)
    for (NodeSet& s : r.rule(g, reach, options)) offer(std::move(s), r.name);
  return out;
}

absl::Status require_plain_layouts(const Graph& group, std::string_view backend) {
  for (const Value& v : group.values())
    if (!v.layout.plain())
      return absl::InvalidArgumentError(
          str_cat(backend, ": value '", v.name, "' is in layout ",
                  layout_name(v.layout, v.type.shape.size()), "; this backend takes plain ones"));
  return absl::OkStatus();
}

absl::Status BackendRegistry::add(std::unique_ptr<Backend> backend) {
  if (!backend) return absl::InvalidArgumentError("backend registry: null backend");
  if (find(backend->name()))
    return absl::AlreadyExistsError(
        str_cat("backend '", backend->name(), "' is already registered"));
  backends_.push_back(std::move(backend));
  return absl::OkStatus();
}

const Backend* BackendRegistry::find(std::string_view name) const {
  for (const auto& b : backends_)
    if (b->name() == name) return b.get();
  return nullptr;
}

void BackendRegistry::add_unavailable(std::string name, std::string why) {
  unavailable_.emplace_back(std::move(name), std::move(why));
}

std::string BackendRegistry::unavailable_reason(std::string_view name) const {
  for (const auto& [n, why] : unavailable_)
    if (n == name) return why;
  return {};
}

std::string BackendRegistry::not_registered(std::string_view name) const {
  const std::string why = unavailable_reason(name);
  return str_cat("backend '", name, "' is not registered", why.empty() ? "" : ": ", why);
}

std::vector<const Backend*> BackendRegistry::all() const {
  std::vector<const Backend*> out;
  for (const auto& b : backends_) out.push_back(b.get());
  return out;
}

}  // namespace collage
