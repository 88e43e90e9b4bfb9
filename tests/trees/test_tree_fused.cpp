// The fused strategy (one TreeEnsemble operator) and the trees backend's kernels: the reference
// operator and every kernel variant against the libraries' predictions on the trained models
// (NaN rows included), against the scalar evaluator on random ensembles of every depth, and
// bit-for-bit against each other.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "collage/backends/trees.h"
#include "collage/executor.h"
#include "collage/ops/trees.h"
#include "collage/reference.h"
#include "collage/subgraph.h"
#include "frontends/trees/tree_program.h"
#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

constexpr double kTolerance = 1e-5;
constexpr TreesKernelVariant kVariants[] = {
    TreesKernelVariant::scalar, TreesKernelVariant::avx512, TreesKernelVariant::avx512_ranks,
    TreesKernelVariant::avx2, TreesKernelVariant::avx2_ranks};

// The fused graph placed with its TreeEnsemble on a trees backend pinned to `variant` (the rest
// on the reference backend), built for `target`, run on x. Empty when this CPU lacks the variant.
std::optional<Tensor> run_on_trees_backend(const Graph& g, TreesKernelVariant variant,
                                           const Tensor& x, const std::string& target = "") {
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(backends.add(make_trees_backend({variant})).ok());
  PlacementOptions options;
  options.strategy = "single:trees";
  auto placement = optimize(tree_test_context(), backends, g, options);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  bool on_trees = false;
  for (const PlacedGroup& group : placement->groups) on_trees |= group.backend == "trees";
  REQUIRE(on_trees);
  BuildOptions build;
  build.num_threads = 2;
  build.target = target;
  auto model = compile_placement(tree_test_context(), backends, g, *placement, build);
  if (!model.ok() && variant != TreesKernelVariant::scalar &&
      model.status().message().find("lacks") != std::string_view::npos)
    return std::nullopt;
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  auto out = model->run({x});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return (*out)[0];
}

Graph fused_graph(const TreeEnsemble& m, int64_t batch, bool margin = false) {
  TreeGraphOptions options;
  options.output_margin = margin;
  auto g = build_tree_graph(tree_test_context(), m, TreeStrategy::fused, batch, options);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

Tensor run_reference_graph(const Graph& g, const Tensor& x) {
  auto out = run_reference(g, {x});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return (*out)[0];
}

// Largest |a - b|, where NaN must match NaN; the tests below require 0 (same additions, same
// order).
double differs(const Tensor& a, const Tensor& b) {
  return max_abs_error(a, b);
}

absl::StatusOr<TreeEnsemble> import(const TreeCase& c) {
  if (c.format == "xgboost") return import_xgboost_json(c.model);
  return import_lightgbm_text(c.model);
}

TEST_CASE("fused: trained models match the library on the reference and every kernel",
          "[trees][models]") {
  int checked = 0, refused = 0;
  for (const TreeCase& c : tree_cases()) {
    if (c.format != "xgboost" && c.format != "lightgbm") continue;
    INFO("case " << c.name);
    auto model = import(c);
    REQUIRE(model.ok());
    auto arrays = read_npz(c.arrays);
    REQUIRE(arrays.ok());
    const Tensor x = npz_array(*arrays, "x");
    if (!trees::fused_strategy_supports(*model).ok()) {
      // LightGBM's zero-as-missing band: the fused strategy says so and auto avoids it.
      check_status(build_tree_graph(tree_test_context(), *model, TreeStrategy::fused, 4).status(),
                   absl::StatusCode::kUnimplemented, "fused strategy has no");
      CHECK(pick_tree_strategy(*model) != TreeStrategy::fused);
      ++refused;
      continue;
    }
    CHECK(pick_tree_strategy(*model) == TreeStrategy::fused);
    for (bool margin : {false, true}) {
      INFO("margin " << margin);
      const Tensor want = npz_array(*arrays, margin ? "margins" : "predictions");
      const Graph g = fused_graph(*model, x.shape()[0], margin);
      const Tensor ref = run_reference_graph(g, x);
      CHECK(max_abs_error(ref, want) <= kTolerance);
      for (TreesKernelVariant v : kVariants) {
        INFO("variant " << trees_kernel_variant_name(v));
        if (auto y = run_on_trees_backend(g, v, x)) CHECK(differs(*y, ref) == 0.0);
      }
    }
    ++checked;
  }
  CHECK(checked >= 12);
  CHECK(checked + refused == 18);
}

// A random tree of at most `depth` levels of splits, unbalanced (leaves at every level).
int32_t random_subtree(Tree& t, std::mt19937& rng, int depth, int64_t features) {
  const auto id = static_cast<int32_t>(t.nodes.size());
  t.nodes.emplace_back();
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  if (depth == 0 || (t.nodes.size() > 1 && rng() % 5 == 0)) {
    t.nodes[id].value = value(rng);
    return id;
  }
  TreeNode n;
  n.feature = static_cast<int32_t>(rng() % features);
  n.threshold = std::round(value(rng) * 8) / 8;  // on the grid the inputs use, so ties occur
  n.compare = TreeCompare::less_f32;
  if (rng() % 6 == 0) {
    // LightGBM's split between missing and present values: x <= +inf.
    n.threshold = std::numeric_limits<double>::infinity();
    n.compare = TreeCompare::less_equal_f64;
  }
  n.default_left = rng() % 2 == 0;
  n.left = random_subtree(t, rng, depth - 1, features);
  n.right = random_subtree(t, rng, depth - 1, features);
  t.nodes[id] = n;
  return id;
}

TEST_CASE("fused: random ensembles of every depth, tails, NaN and infinite inputs, <= +inf splits",
          "[trees]") {
  std::mt19937 rng(7);
  for (int depth : {1, 3, 5, 6, 7, 9}) {
    for (int64_t outputs : {1, 3}) {
      TreeEnsemble m;
      m.name = "random";
      m.num_features = 11;
      m.num_outputs = outputs;
      m.base_score.assign(static_cast<size_t>(outputs), 0.25);
      for (int t = 0; t < 9; ++t) {  // not a multiple of the four trees the kernel interleaves
        Tree tree;
        tree.output = t % static_cast<int>(outputs);
        random_subtree(tree, rng, depth, m.num_features);
        m.trees.push_back(std::move(tree));
      }
      for (int64_t batch : {1, 17, 130}) {
        INFO("depth " << depth << " outputs " << outputs << " batch " << batch);
        Tensor x(DType::f32, {batch, m.num_features});
        std::uniform_int_distribution<int> grid(-9, 9);
        for (int64_t i = 0; i < x.numel(); ++i) {
          const int k = grid(rng);
          // NaN in some rows only, so that blocks with and without NaN both occur.
          const bool nan_row = (i / m.num_features) % 7 == 3 && k % 3 == 0;
          const float inf = std::numeric_limits<float>::infinity();
          x.data<float>()[i] = nan_row   ? std::numeric_limits<float>::quiet_NaN()
                               : k == 9  ? inf
                               : k == -9 ? -inf
                                         : k / 8.f;
        }
        auto want = evaluate_tree_ensemble(m, x);
        REQUIRE(want.ok());
        const Graph g = fused_graph(m, batch);
        const Tensor ref = run_reference_graph(g, x);
        CHECK(max_abs_error(ref, *want) <= kTolerance);
        for (TreesKernelVariant v : kVariants) {
          INFO("variant " << trees_kernel_variant_name(v));
          if (auto y = run_on_trees_backend(g, v, x)) CHECK(differs(*y, ref) == 0.0);
        }
      }
    }
  }
}

TEST_CASE("trees backend: a target without AVX-512 caps the automatic loop at AVX2", "[trees]") {
  std::mt19937 rng(11);
  TreeEnsemble m;
  m.name = "capped";
  m.num_features = 5;
  m.num_outputs = 1;
  m.base_score = {0.5};
  for (int t = 0; t < 20; ++t) {
    Tree tree;
    random_subtree(tree, rng, 6, m.num_features);
    m.trees.push_back(std::move(tree));
  }
  const int64_t batch = 45;
  Tensor x(DType::f32, {batch, m.num_features});
  std::uniform_int_distribution<int> grid(-9, 9);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = grid(rng) / 8.f;
  const Graph g = fused_graph(m, batch);
  const Tensor ref = run_reference_graph(g, x);
  NodeSet nodes(g.nodes().size());
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
    if (g.node(n).op_name() == "TreeEnsemble") nodes.insert(n);
  auto group = extract_subgraph(tree_test_context(), g, nodes);
  REQUIRE(group.ok());
  const std::unique_ptr<Backend> trees = make_trees_backend();
  // The variant is the sixth little-endian int64 of the kernel parameters.
  auto variant_of = [&](const std::string& target) -> int64_t {
    BuildOptions options;
    options.target = target;
    auto kernel = trees->build(group->graph, options);
    INFO(target << ": " << kernel.status().ToString());
    REQUIRE(kernel.ok());
    const std::vector<uint8_t>& p = (*kernel)->record().params;
    REQUIRE(p.size() == 48);
    int64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | p[40 + b];
    return v;
  };
  CHECK(variant_of("") == 0);           // automatic: the widest loop of the CPU that runs it
  CHECK(variant_of("avx512") == 0);     // AVX-512 allowed
  CHECK(variant_of("x86-64-v3") == 6);  // automatic capped at AVX2
  CHECK(variant_of("x86-64") == 1);     // no AVX2: the scalar loop
  BuildOptions bad;
  bad.target = "no-such-cpu";
  CHECK(trees->build(group->graph, bad).status().code() == absl::StatusCode::kInvalidArgument);
  // The capped kernel computes what the others do.
  if (auto y = run_on_trees_backend(g, TreesKernelVariant::automatic, x, "avx2"))
    CHECK(differs(*y, ref) == 0.0);
}

TEST_CASE("trees backend: tables must be constants; the module checks its descriptor", "[trees]") {
  const Context& ctx = tree_test_context();
  GraphBuilder b(ctx, "tables_as_inputs");
  const ValueId x = b.add_input("x", {DType::f32, {2, 4}});
  const ValueId feature = b.add_input("feature", {DType::i32, {1, 1}});
  auto y = b.add("TreeEnsemble",
                 {x, feature, b.add_constant("threshold", Tensor(DType::f32, {1, 1})),
                  b.add_constant("nan_left", Tensor(DType::boolean, {1, 1})),
                  b.add_constant("leaf", Tensor(DType::f32, {1, 2})),
                  b.add_constant("tree_output", Tensor(DType::i32, {1})),
                  b.add_constant("base", Tensor(DType::f32, {1}))},
                 nullptr, "ensemble");
  REQUIRE(y.ok());
  b.add_output(*y);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto backend = make_trees_backend();
  CHECK(backend->candidates(*g, GraphReachability(*g)).empty());

  // A feature index beyond the input's columns is refused when the kernel is created.
  TreeEnsemble m;
  m.name = "wide";
  m.num_features = 3;
  m.base_score = {0.0};
  Tree t;
  t.nodes.resize(3);
  t.nodes[0].feature = 2;
  t.nodes[0].left = 1;
  t.nodes[0].right = 2;
  m.trees.push_back(t);
  Graph fused = fused_graph(m, 2);
  // Cut the input down to two columns behind the backend's back: rebuild X as f32[2x2].
  GraphBuilder nb(ctx, "narrow");
  const ValueId nx = nb.add_input("x", {DType::f32, {2, 2}});
  std::vector<ValueId> inputs = {nx};
  const Node& node = fused.nodes()[0];
  for (size_t i = 1; i < node.inputs.size(); ++i)
    inputs.push_back(
        nb.add_constant(fused.value(node.inputs[i]).name, *fused.constant_of(node.inputs[i])));
  auto ny = nb.add("TreeEnsemble", inputs, nullptr, "ensemble");
  REQUIRE(ny.ok());
  nb.add_output(*ny);
  auto narrow = nb.finish();
  REQUIRE(narrow.ok());
  check_status(backend->build(*narrow, {}).status(), absl::StatusCode::kInvalidArgument,
               "reads feature 2 of 2");
}

TEST_CASE("TreeEnsemble: shape errors name the input", "[trees]") {
  const Context& ctx = tree_test_context();
  auto build = [&](Shape feature, Shape leaf, DType nan_dtype) {
    GraphBuilder b(ctx, "bad");
    const ValueId x = b.add_input("x", {DType::f32, {2, 4}});
    auto table = [&](const char* name, DType t, Shape s) {
      return b.add_constant(name, Tensor(t, std::move(s)));
    };
    const int64_t trees = feature[0];
    return b
        .add("TreeEnsemble",
             {x, table("feature", DType::i32, feature), table("threshold", DType::f32, feature),
              table("nan_left", nan_dtype, feature), table("leaf", DType::f32, leaf),
              table("tree_output", DType::i32, {trees}), table("base", DType::f32, {1})},
             nullptr, "ensemble")
        .status();
  };
  CHECK(build({2, 3}, {2, 4}, DType::boolean).ok());
  check_status(build({2, 4}, {2, 5}, DType::boolean), absl::StatusCode::kInvalidArgument,
               "a perfect tree has 2^depth - 1");
  check_status(build({2, 3}, {2, 3}, DType::boolean), absl::StatusCode::kInvalidArgument,
               "leaf is f32[2x3], expected f32[2x4]");
  check_status(build({2, 3}, {2, 4}, DType::f32), absl::StatusCode::kInvalidArgument,
               "nan_left is f32[2x3], expected bool");
}

}  // namespace
}  // namespace collage::testing
