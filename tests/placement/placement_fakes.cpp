// Test doubles for the placement searches.
#include "placement_fakes.h"

#include <random>

#include "collage/executor.h"

namespace collage::testing {
namespace {

class FakeBackend : public Backend {
 public:
  explicit FakeBackend(std::string name) : Backend(std::move(name), DeviceKind::cpu, "test") {}
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    return make_reference_backend()->build(group, options);
  }
};

}  // namespace

std::unique_ptr<Backend> fake_backend(std::string name,
                                      std::vector<std::pair<std::string, std::string>> patterns,
                                      std::vector<std::vector<NodeId>> fixed_sets) {
  auto b = std::make_unique<FakeBackend>(std::move(name));
  for (auto& [pname, text] : patterns) b->add_pattern(pname, *parse_pattern(text));
  if (!fixed_sets.empty())
    b->add_pattern_rule("fixed",
                        [fixed_sets](const Graph& g, const GraphReachability&, const RuleOptions&) {
                          std::vector<NodeSet> out;
                          for (const auto& s : fixed_sets)
                            out.push_back(NodeSet::of(g.nodes().size(), s));
                          return out;
                        });
  return b;
}

std::vector<std::string> describe(const Placement& p) {
  std::vector<std::string> out;
  for (const PlacedGroup& g : p.groups) {
    std::string s = g.backend + "{";
    for (NodeId n : g.nodes.to_vector()) {
      if (s.back() != '{') s += ',';
      s += std::to_string(n);
    }
    out.push_back(s + "}");
  }
  return out;
}

absl::StatusOr<Cost> FunctionCostModel::cost(const Candidate& c, const ExtractedSubgraph&) {
  ++calls;
  const double ms = fn_(c.backend->name(), c.nodes.to_vector());
  if (ms < 0) return absl::InvalidArgumentError("fake build failure");
  return Cost{ms, 1, 0, false};
}

absl::StatusOr<Cost> OpTableCostModel::cost(const Candidate& c, const ExtractedSubgraph&) {
  auto b = table_.find(c.backend->name());
  if (b == table_.end()) return absl::InvalidArgumentError("no such backend in the table");
  double ms = 0;
  bool first = true;
  for (NodeId n : c.nodes.to_vector()) {
    auto it = b->second.find(g_.node(n).op_name());
    if (it == b->second.end())
      return absl::InvalidArgumentError("unsupported operator " + g_.node(n).op_name());
    ms += first ? it->second : it->second * fused_;
    first = false;
  }
  return Cost{ms, 1, 0, false};
}

double FakeEvaluator::exact(const Placement& p) const {
  const size_t n = g_.nodes().size();
  std::vector<int> owner(n, -1);
  double ms = 0;
  for (size_t i = 0; i < p.groups.size(); ++i) {
    ms += cost_(p.groups[i].backend, p.groups[i].nodes.to_vector()) + per_group_;
    for (NodeId m : p.groups[i].nodes.to_vector()) owner[m] = static_cast<int>(i);
  }
  const auto& users = g_.users();
  for (size_t m = 0; m < n; ++m)
    for (ValueId out : g_.node(static_cast<NodeId>(m)).outputs)
      for (NodeId u : users[out])
        if (p.groups[owner[m]].backend != p.groups[owner[u]].backend) ms += per_crossing_;
  return ms;
}

absl::StatusOr<double> FakeEvaluator::latency_ms(const Placement& p) {
  ++calls;
  return exact(p);
}

Graph random_graph(const Context& ctx, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  GraphBuilder b(ctx, "random");
  std::vector<ValueId> values = {b.add_input("x", {DType::f32, {4}})};
  std::vector<int> reads(1, 0);
  for (int i = 0; i < n; ++i) {
    const size_t a = rng() % values.size();
    ValueId v;
    if (rng() % 2 == 0) {
      v = *b.add("Relu", {values[a]});
      ++reads[a];
    } else {
      const size_t c = rng() % values.size();
      v = *b.add("Add", {values[a], values[c]});
      ++reads[a];
      ++reads[c];
    }
    values.push_back(v);
    reads.push_back(0);
  }
  for (size_t i = 1; i < values.size(); ++i)
    if (reads[i] == 0) b.add_output(values[i]);
  return *b.finish();
}

}  // namespace collage::testing
