// Measured strategy choice with a deterministic fake measurer: the fastest candidate wins, ties go
// to the earlier one, candidates the model cannot use or that fail to measure are skipped with
// their reason, and the measurer sees each candidate's own program at the requested batch.
#include <catch2/catch.hpp>
#include <map>

#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

// Two stumps on feature 0 and one depth-2 tree; `zero_band` gives the first split LightGBM's
// zero-as-missing rule, which the fused strategy does not handle.
TreeEnsemble small_model(bool zero_band = false) {
  TreeEnsemble m;
  m.name = "choice";
  m.source = "lightgbm";
  m.num_features = 3;
  m.base_score = {0.5};
  for (int t = 0; t < 3; ++t) {
    Tree tree;
    tree.nodes.resize(t == 2 ? 5 : 3);
    TreeNode& root = tree.nodes[0];
    root.feature = t;
    root.threshold = 0.5;
    root.compare = TreeCompare::less_equal_f64;
    root.missing = zero_band && t == 0 ? TreeMissing::zero_or_nan : TreeMissing::nan;
    root.left = 1;
    root.right = 2;
    tree.nodes[1].value = -1.0 - t;
    tree.nodes[2].value = 1.0 + t;
    if (t == 2) {
      tree.nodes[2] = TreeNode{};
      tree.nodes[2].feature = 1;
      tree.nodes[2].threshold = -0.25;
      tree.nodes[2].compare = TreeCompare::less_equal_f64;
      tree.nodes[2].left = 3;
      tree.nodes[2].right = 4;
      tree.nodes[3].value = 0.125;
      tree.nodes[4].value = 0.375;
    }
    m.trees.push_back(std::move(tree));
  }
  return m;
}

// Returns the time the table gives each candidate's label and records what it was shown.
struct FakeMeasurer {
  std::map<std::string, double> ms;
  std::vector<std::string> seen;
  std::vector<int64_t> batches;
  std::vector<bool> has_tree_ensemble;

  TreeStrategyMeasurer fn() {
    return [this](const TreeStrategyCandidate& c, const Graph& g) -> absl::StatusOr<double> {
      const std::string label = tree_strategy_label(c);
      seen.push_back(label);
      batches.push_back(g.value(g.inputs()[0]).type.shape[0]);
      bool fused = false;
      for (const Node& n : g.nodes()) fused |= n.op_name() == "TreeEnsemble";
      has_tree_ensemble.push_back(fused);
      auto it = ms.find(label);
      if (it == ms.end()) return absl::UnavailableError(label + ": backend unavailable");
      return it->second;
    };
  }
};

TEST_CASE("strategy choice: the fastest measured candidate wins", "[trees]") {
  const TreeEnsemble m = small_model();
  FakeMeasurer fake;
  fake.ms = {{"fused:auto", 0.9}, {"ptt", 0.4}, {"tt", 0.7}, {"gemm", 2.0}};
  auto choice = choose_tree_strategy(tree_test_context(), m, 64, default_tree_strategy_candidates(),
                                     fake.fn());
  INFO(choice.status().ToString());
  REQUIRE(choice.ok());
  CHECK(choice->best.strategy == TreeStrategy::perfect_tree_traversal);
  CHECK(fake.seen == std::vector<std::string>{"fused:auto", "ptt", "tt", "gemm"});
  CHECK(fake.batches == std::vector<int64_t>{64, 64, 64, 64});
  // Each candidate is measured on its own program: only the fused one is a TreeEnsemble.
  CHECK(fake.has_tree_ensemble == std::vector<bool>{true, false, false, false});
  REQUIRE(choice->timings.size() == 4);
  CHECK(choice->timings[0].ms == 0.9);
  CHECK(choice->timings[3].ms == 2.0);
}

TEST_CASE("strategy choice: ties go to the earlier candidate, variants are candidates", "[trees]") {
  const TreeEnsemble m = small_model();
  FakeMeasurer fake;
  fake.ms = {{"fused:scalar", 0.5}, {"fused:avx512", 0.5}, {"gemm", 0.5}};
  const std::vector<TreeStrategyCandidate> candidates = {
      {TreeStrategy::fused, "scalar"}, {TreeStrategy::fused, "avx512"}, {TreeStrategy::gemm, ""}};
  auto choice = choose_tree_strategy(tree_test_context(), m, 8, candidates, fake.fn());
  REQUIRE(choice.ok());
  CHECK(tree_strategy_label(choice->best) == "fused:scalar");
  fake.ms["fused:avx512"] = 0.25;
  choice = choose_tree_strategy(tree_test_context(), m, 8, candidates, fake.fn());
  REQUIRE(choice.ok());
  CHECK(tree_strategy_label(choice->best) == "fused:avx512");
}

TEST_CASE("strategy choice: unusable and failing candidates are skipped with a reason", "[trees]") {
  const TreeEnsemble m = small_model(/*zero_band=*/true);
  FakeMeasurer fake;
  fake.ms = {{"fused:auto", 0.1}, {"tt", 0.3}, {"gemm", 0.2}};  // ptt fails to measure
  // A limit between TT's largest tensor and GEMM's ([batch, leaves] one-hot leaf selections).
  auto largest = [&](TreeStrategy s) {
    auto g = build_tree_graph(tree_test_context(), m, s, 100);
    REQUIRE(g.ok());
    int64_t bytes = 0;
    for (const Value& v : g->values())
      bytes = std::max<int64_t>(bytes, static_cast<int64_t>(v.type.bytes()));
    return bytes;
  };
  TreeStrategyChoiceOptions options;
  options.max_value_bytes = largest(TreeStrategy::tree_traversal);
  REQUIRE(largest(TreeStrategy::gemm) > options.max_value_bytes);
  auto choice = choose_tree_strategy(tree_test_context(), m, 100,
                                     default_tree_strategy_candidates(), fake.fn(), options);
  INFO(choice.status().ToString());
  REQUIRE(choice.ok());
  CHECK(choice->best.strategy == TreeStrategy::tree_traversal);
  REQUIRE(choice->timings.size() == 4);
  CHECK(choice->timings[0].status.code() == absl::StatusCode::kUnimplemented);  // zero band
  CHECK(choice->timings[1].status.code() == absl::StatusCode::kUnavailable);    // measurer
  CHECK(choice->timings[2].ms == 0.3);
  CHECK(choice->timings[3].status.code() == absl::StatusCode::kResourceExhausted);
  CHECK(fake.seen == std::vector<std::string>{"ptt", "tt"});
}

TEST_CASE("strategy choice: errors", "[trees]") {
  const TreeEnsemble m = small_model();
  FakeMeasurer fake;  // measures nothing
  check_status(
      choose_tree_strategy(tree_test_context(), m, 4, default_tree_strategy_candidates(), fake.fn())
          .status(),
      absl::StatusCode::kResourceExhausted, "no tree strategy could be measured");
  check_status(choose_tree_strategy(tree_test_context(), m, 4, {}, fake.fn()).status(),
               absl::StatusCode::kInvalidArgument, "no candidate");
  check_status(
      choose_tree_strategy(tree_test_context(), m, 4, {{TreeStrategy::automatic, ""}}, fake.fn())
          .status(),
      absl::StatusCode::kInvalidArgument, "'auto' is no strategy");
  check_status(
      choose_tree_strategy(tree_test_context(), m, 0, default_tree_strategy_candidates(), fake.fn())
          .status(),
      absl::StatusCode::kInvalidArgument, "batch size 0");
}

}  // namespace
}  // namespace collage::testing
