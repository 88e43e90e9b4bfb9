// Test doubles for the placement searches: fake backends, deterministic cost models and
// end-to-end evaluators, and small random graphs.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "collage/placement.h"

namespace collage::testing {

// A backend that runs its groups with the reference executor, offering `patterns` (name, text)
// and fixed node sets (a rule named "fixed").
std::unique_ptr<Backend> fake_backend(std::string name,
                                      std::vector<std::pair<std::string, std::string>> patterns,
                                      std::vector<std::vector<NodeId>> fixed_sets = {});

// "backend{n0,n1}" per group, in placement order.
std::vector<std::string> describe(const Placement& p);

// Costs from a function of (backend, node ids); boundary_ms a constant per boundary value.
class FunctionCostModel : public CostModel {
 public:
  using Fn = std::function<double(const std::string& backend, const std::vector<NodeId>& nodes)>;
  explicit FunctionCostModel(Fn fn, double boundary = 0)
      : fn_(std::move(fn)), boundary_(boundary) {}
  absl::StatusOr<Cost> cost(const Candidate& c, const ExtractedSubgraph&) override;
  double boundary_ms(const TensorType&) override { return boundary_; }
  int calls = 0;

 private:
  Fn fn_;
  double boundary_;
};

// Per-op costs per backend: the cost of a candidate is the sum over its nodes of
// table[backend][op] times `fused` for every node after the first (fusion discount). Missing
// entries make the candidate fail to "build".
class OpTableCostModel : public CostModel {
 public:
  OpTableCostModel(const Graph& g, std::map<std::string, std::map<std::string, double>> table,
                   double fused = 1.0)
      : g_(g), table_(std::move(table)), fused_(fused) {}
  absl::StatusOr<Cost> cost(const Candidate& c, const ExtractedSubgraph&) override;

 private:
  const Graph& g_;
  std::map<std::string, std::map<std::string, double>> table_;
  double fused_;
};

// End-to-end latency: the sum of `cost` over the groups, plus `per_group` for each group and
// `per_crossing` for every edge between groups of different backends. Counts its calls.
class FakeEvaluator : public PlacementEvaluator {
 public:
  FakeEvaluator(const Graph& g, FunctionCostModel::Fn cost, double per_group, double per_crossing)
      : g_(g), cost_(std::move(cost)), per_group_(per_group), per_crossing_(per_crossing) {}
  absl::StatusOr<double> latency_ms(const Placement& p) override;
  double exact(const Placement& p) const;
  int calls = 0;

 private:
  const Graph& g_;
  FunctionCostModel::Fn cost_;
  double per_group_, per_crossing_;
};

// A FakeEvaluator under which the chosen placement ("two-level") runs `penalty_ms` slower once
// `comparing` is set (at the comparison's phase): a search's lucky measurement measured again.
struct UnluckyEvaluator : FakeEvaluator {
  UnluckyEvaluator(const Graph& g, FunctionCostModel::Fn cost, double per_group,
                   double per_crossing, double penalty_ms)
      : FakeEvaluator(g, std::move(cost), per_group, per_crossing), penalty_ms(penalty_ms) {}
  absl::StatusOr<double> latency_ms(const Placement& p) override {
    absl::StatusOr<double> ms = FakeEvaluator::latency_ms(p);
    if (ms.ok() && comparing && p.strategy == "two-level") *ms += penalty_ms;
    return ms;
  }
  double penalty_ms;
  bool comparing = false;
};

// A random DAG of `n` nodes over one input of type f32[4]: each node is Relu of one earlier value
// or Add of two, drawn from a generator seeded with `seed`; every value nobody reads is an output.
Graph random_graph(const Context& ctx, int n, uint64_t seed);

}  // namespace collage::testing
