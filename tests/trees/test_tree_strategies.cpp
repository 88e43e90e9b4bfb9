// The three strategies against the scalar evaluator on hand-made models: every comparison rule
// and missing-value rule at thresholds that float32 cannot hold, with NaN, infinities, signed
// zeros and LightGBM's zero band; random ensembles; degenerate and oversized models.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "collage/reference.h"
#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kMax = std::numeric_limits<float>::max();

TreeEnsemble base_model(int64_t features, int64_t outputs) {
  TreeEnsemble m;
  m.name = "handmade";
  m.num_features = features;
  m.num_outputs = outputs;
  m.base_score.assign(static_cast<size_t>(outputs), 0.0);
  return m;
}

// A tree with one split on feature 0: left leaf 1, right leaf 2.
Tree stump(double threshold, TreeCompare compare, TreeMissing missing, bool default_left) {
  Tree t;
  t.nodes.resize(3);
  TreeNode& root = t.nodes[0];
  root.feature = 0;
  root.threshold = threshold;
  root.compare = compare;
  root.missing = missing;
  root.default_left = default_left;
  root.left = 1;
  root.right = 2;
  t.nodes[1].value = 1.0;
  t.nodes[2].value = 2.0;
  return t;
}

Tensor column(const std::vector<float>& values) {
  return Tensor::from_f32({static_cast<int64_t>(values.size()), 1}, values);
}

// Values around every threshold below, and the special values.
std::vector<float> probe_values(const std::vector<double>& thresholds) {
  std::vector<float> v = {kNaN,
                          kInf,
                          -kInf,
                          0.f,
                          -0.f,
                          1e-36f,
                          -1e-36f,
                          1e-35f,
                          -1e-35f,
                          std::nextafter(1e-35f, 1.f),
                          -std::nextafter(1e-35f, 1.f),
                          kMax,
                          -kMax,
                          1e-40f,
                          -1e-40f,
                          1.f,
                          -1.f};
  for (double t : thresholds) {
    const float f = static_cast<float>(t);
    for (float c : {f, std::nextafter(f, kInf), std::nextafter(f, -kInf)})
      if (!std::isnan(c)) v.push_back(c);
  }
  return v;
}

TEST_CASE("every split rule matches the evaluator at its edges", "[trees][strategies]") {
  const std::vector<double> thresholds = {
      0.1,           -0.1,      1e-35,    -1e-35,      double(0.1f), 0.0,
      -0.0,          1e-40,     3e38,     1e300,       -1e300,       double(kMax),
      -double(kMax), -INFINITY, INFINITY, 1.0 + 1e-12, 16777217.0};
  const Tensor x = column(probe_values(thresholds));
  for (TreeCompare cmp : {TreeCompare::less_f32, TreeCompare::less_equal_f32,
                          TreeCompare::less_equal_f64, TreeCompare::less_f64}) {
    for (TreeMissing missing :
         {TreeMissing::nan, TreeMissing::nan_is_zero, TreeMissing::zero_or_nan}) {
      for (bool default_left : {false, true}) {
        for (double t : thresholds) {
          for (double zero_threshold : {0.0, double(1e-35f)}) {
            TreeEnsemble m = base_model(1, 1);
            m.trees.push_back(stump(t, cmp, missing, default_left));
            m.zero_threshold = zero_threshold;
            INFO("compare " << int(cmp) << " missing " << int(missing) << " default_left "
                            << default_left << " threshold " << t << " zero_threshold "
                            << zero_threshold);
            auto expected = evaluate_tree_ensemble(m, x);
            REQUIRE(expected.ok());
            for (TreeStrategy s : kAllStrategies) {
              INFO("strategy " << tree_strategy_name(s));
              const Tensor y = run_tree_graph(m, s, x);
              for (int64_t i = 0; i < x.numel(); ++i) {
                INFO("x = " << x.data<float>()[i]);
                CHECK(y.data<float>()[i] == expected->data<float>()[i]);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("the evaluator follows each library's rule", "[trees][strategies]") {
  auto eval = [](TreeCompare cmp, TreeMissing missing, bool dl, double t, float x) {
    TreeEnsemble m = base_model(1, 1);
    m.trees.push_back(stump(t, cmp, missing, dl));
    return evaluate_tree_ensemble(m, column({x}))->data<float>()[0];
  };
  // LightGBM compares in double: 0.1f is above the double 0.1, so it goes right.
  CHECK(eval(TreeCompare::less_equal_f64, TreeMissing::nan, false, 0.1, 0.1f) == 2.f);
  CHECK(eval(TreeCompare::less_equal_f64, TreeMissing::nan, false, double(0.1f), 0.1f) == 1.f);
  // XGBoost's strict < sends the threshold itself right.
  CHECK(eval(TreeCompare::less_f32, TreeMissing::nan, true, 0.5, 0.5f) == 2.f);
  CHECK(eval(TreeCompare::less_f32, TreeMissing::nan, true, 0.5, kNaN) == 1.f);
  // LightGBM MissingType::None compares NaN as 0; Zero sends tiny values the default way.
  CHECK(eval(TreeCompare::less_equal_f64, TreeMissing::nan_is_zero, false, 0.5, kNaN) == 1.f);
  CHECK(eval(TreeCompare::less_equal_f64, TreeMissing::nan_is_zero, false, -0.5, kNaN) == 2.f);
  CHECK(eval(TreeCompare::less_equal_f64, TreeMissing::zero_or_nan, false, 0.5, 1e-36f) == 2.f);
  CHECK(eval(TreeCompare::less_equal_f64, TreeMissing::zero_or_nan, false, 0.5, 2e-35f) == 1.f);
  // `<= +inf` sends +inf left; LightGBM writes it for missing-versus-present splits.
  CHECK(eval(TreeCompare::less_equal_f64, TreeMissing::nan, false, INFINITY, kInf) == 1.f);
  CHECK(eval(TreeCompare::less_equal_f64, TreeMissing::nan, false, INFINITY, kNaN) == 2.f);
}

// A random tree of at most `depth` levels over `features` features.
void grow(Tree& t, int32_t at, int depth, int64_t features, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if (depth == 0 || rng() % 5 == 0) {
    t.nodes[at].value = u(rng);
    return;
  }
  TreeNode& n = t.nodes[at];
  n.feature = static_cast<int32_t>(rng() % features);
  n.threshold = rng() % 7 == 0 ? 0.0 : u(rng);
  n.compare = static_cast<TreeCompare>(rng() % 4);
  n.missing = static_cast<TreeMissing>(rng() % 3);
  n.default_left = rng() % 2;
  const auto left = static_cast<int32_t>(t.nodes.size());
  t.nodes.resize(t.nodes.size() + 2);
  t.nodes[at].left = left;
  t.nodes[at].right = left + 1;
  grow(t, left, depth - 1, features, rng);
  grow(t, left + 1, depth - 1, features, rng);
}

Tensor random_input(int64_t rows, int64_t features, std::mt19937& rng) {
  Tensor x(DType::f32, {rows, features});
  std::uniform_real_distribution<float> u(-1.2f, 1.2f);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const unsigned r = rng() % 20;
    x.data<float>()[i] = r == 0   ? kNaN
                         : r == 1 ? kInf
                         : r == 2 ? -kInf
                         : r == 3 ? 0.f
                         : r == 4 ? 1e-36f
                                  : u(rng);
  }
  return x;
}

TEST_CASE("random ensembles: all strategies match the evaluator", "[trees][strategies]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 12; ++round) {
    const int64_t features = 1 + rng() % 6, outputs = 1 + rng() % 4;
    TreeEnsemble m = base_model(features, outputs);
    const int depth = static_cast<int>(rng() % 7);
    const int trees = 1 + static_cast<int>(rng() % 9);
    for (int t = 0; t < trees; ++t) {
      Tree tree;
      tree.nodes.resize(1);
      tree.output = static_cast<int32_t>(rng() % outputs);
      grow(tree, 0, depth, features, rng);
      m.trees.push_back(std::move(tree));
    }
    for (double& b : m.base_score) b = (rng() % 100) / 50.0 - 1.0;
    m.tree_scale = round % 3 == 0 ? 0.25 : 1.0;
    m.zero_threshold = round % 2 ? double(1e-35f) : 0.0;
    m.post_transform = static_cast<TreePostTransform>(round % 4);
    m.sigmoid_scale = round % 2 ? 1.0 : 0.5;
    const Tensor x = random_input(37, features, rng);
    auto expected = evaluate_tree_ensemble(m, x);
    REQUIRE(expected.ok());
    INFO("round " << round << " depth " << tree_ensemble_depth(m));
    for (TreeStrategy s : {TreeStrategy::automatic, TreeStrategy::gemm,
                           TreeStrategy::tree_traversal, TreeStrategy::perfect_tree_traversal}) {
      INFO("strategy " << tree_strategy_name(s));
      CHECK(max_abs_error(run_tree_graph(m, s, x), *expected) <= 1e-6);
    }
  }
}

TEST_CASE("single-leaf ensembles give constant predictions", "[trees][strategies]") {
  TreeEnsemble m = base_model(3, 2);
  m.trees.resize(3);
  for (int t = 0; t < 3; ++t) {
    m.trees[t].nodes.resize(1);
    m.trees[t].nodes[0].value = t + 1;
    m.trees[t].output = t % 2;
  }
  m.base_score = {0.5, -0.5};
  const Tensor x = Tensor::from_f32({2, 3}, std::vector<float>{1, 2, 3, kNaN, kInf, 0});
  for (TreeStrategy s : kAllStrategies) {
    const Tensor y = run_tree_graph(m, s, x);
    REQUIRE(y.shape() == Shape{2, 2});
    CHECK(y.data<float>()[0] == 4.5f);
    CHECK(y.data<float>()[1] == 1.5f);
    CHECK(y.data<float>()[2] == 4.5f);
    CHECK(y.data<float>()[3] == 1.5f);
  }
}

// One tree whose left spine has `depth` splits; right leaf d holds d.
TreeEnsemble chain(int depth, int64_t features = 1) {
  TreeEnsemble m = base_model(features, 1);
  Tree t;
  t.nodes.resize(1);
  int32_t at = 0;
  for (int d = 0; d < depth; ++d) {
    const auto next = static_cast<int32_t>(t.nodes.size());
    t.nodes.resize(t.nodes.size() + 2);
    t.nodes[at].feature = 0;
    t.nodes[at].threshold = d;
    t.nodes[at].left = next;
    t.nodes[at].right = next + 1;
    t.nodes[next + 1].value = d;
    at = next;
  }
  m.trees.push_back(std::move(t));
  return m;
}

TEST_CASE("automatic strategy: fused where it applies, else Hummingbird's depth thresholds",
          "[trees][strategies]") {
  CHECK(tree_ensemble_depth(chain(3)) == 3);
  for (int depth : {0, 3, 4, 10, 11, 16})
    CHECK(pick_tree_strategy(chain(depth)) == TreeStrategy::fused);
  CHECK(pick_tree_strategy(chain(17)) == TreeStrategy::tree_traversal);
  // LightGBM's zero-as-missing band keeps the fused operator out.
  auto banded = [](int depth) {
    TreeEnsemble m = chain(depth);
    m.trees[0].nodes[0].missing = TreeMissing::zero_or_nan;
    return m;
  };
  CHECK(pick_tree_strategy(banded(1)) == TreeStrategy::gemm);
  CHECK(pick_tree_strategy(banded(3)) == TreeStrategy::gemm);
  CHECK(pick_tree_strategy(banded(4)) == TreeStrategy::perfect_tree_traversal);
  CHECK(pick_tree_strategy(banded(10)) == TreeStrategy::perfect_tree_traversal);
  CHECK(pick_tree_strategy(banded(11)) == TreeStrategy::tree_traversal);

  // Depth 40: perfect tree traversal would need 2^40 leaves, tree traversal is fine.
  const TreeEnsemble deep = chain(40);
  auto ptt = build_tree_graph(tree_test_context(), deep, TreeStrategy::perfect_tree_traversal, 4);
  check_status(ptt.status(), absl::StatusCode::kResourceExhausted, "use tree traversal");
  const Tensor x = Tensor::from_f32({4, 1}, std::vector<float>{-1.f, 5.5f, 39.f, kNaN});
  auto expected = evaluate_tree_ensemble(deep, x);
  REQUIRE(expected.ok());
  CHECK(max_abs_error(run_tree_graph(deep, TreeStrategy::automatic, x), *expected) == 0.0);
  CHECK(max_abs_error(run_tree_graph(deep, TreeStrategy::gemm, x), *expected) == 0.0);
}

TEST_CASE("strategy and model errors", "[trees][strategies][errors]") {
  const Context& ctx = tree_test_context();
  SECTION("GEMM refuses a huge feature-selection matrix") {
    TreeEnsemble m = chain(6, int64_t{1} << 22);
    m.trees.assign(20, m.trees[0]);
    check_status(build_tree_graph(ctx, m, TreeStrategy::gemm, 1).status(),
                 absl::StatusCode::kResourceExhausted, "GEMM: feature selection A");
  }
  SECTION("invalid structure") {
    TreeEnsemble m = base_model(2, 1);
    m.trees.push_back(stump(0.5, TreeCompare::less_f32, TreeMissing::nan, false));
    m.trees[0].nodes[0].right = 1;
    check_status(build_tree_graph(ctx, m, TreeStrategy::gemm, 1).status(),
                 absl::StatusCode::kInvalidArgument, "tree 0 node 0 has child 1, which is already");
    m.trees[0].nodes[0].right = 7;
    check_status(validate_tree_ensemble(m), absl::StatusCode::kInvalidArgument,
                 "tree 0 node 0 has child 7, outside the tree's 3 nodes");
    m.trees[0].nodes[0].right = 2;
    m.trees[0].nodes[0].feature = 2;
    check_status(validate_tree_ensemble(m), absl::StatusCode::kInvalidArgument,
                 "splits on feature 2, but the model has 2 features");
    m.trees[0].nodes[0].feature = 0;
    m.trees[0].output = 1;
    check_status(validate_tree_ensemble(m), absl::StatusCode::kInvalidArgument,
                 "adds to output 1, but the model has 1");
  }
  SECTION("wrong input") {
    TreeEnsemble m = base_model(2, 1);
    m.trees.push_back(stump(0.5, TreeCompare::less_f32, TreeMissing::nan, false));
    GraphBuilder b(ctx);
    const ValueId x = b.add_input("x", {DType::f32, {4, 3}});
    check_status(add_tree_ensemble(b, x, m).status(), absl::StatusCode::kInvalidArgument,
                 "input 'x' is f32[4x3], expected f32[batchx2]");
    check_status(build_tree_graph(ctx, m, TreeStrategy::gemm, 0).status(),
                 absl::StatusCode::kInvalidArgument, "batch size 0");
    check_status(parse_tree_strategy("fast").status(), absl::StatusCode::kInvalidArgument,
                 "unknown tree strategy 'fast'");
  }
}

}  // namespace
}  // namespace collage::testing
