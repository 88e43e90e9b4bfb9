// The tree-ensemble model: structural validation, depth, strategy names and the scalar evaluator
// that walks each tree with its library's own comparison.
#include <cmath>
#include <vector>

#include "collage/trees.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_program.h"
#include "frontends/trees/tree_util.h"

namespace collage {
namespace {

absl::Status validate_tree(const TreeEnsemble& m, size_t t) {
  const Tree& tree = m.trees[t];
  const auto n = static_cast<int64_t>(tree.nodes.size());
  if (n == 0) return tree_error(m, t, "has no nodes");
  if (tree.output < 0 || tree.output >= m.num_outputs)
    return tree_error(
        m, t, str_cat("adds to output ", tree.output, ", but the model has ", m.num_outputs));
  std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
  std::vector<int32_t> stack = {0};
  seen[0] = 1;
  int64_t reached = 1;
  while (!stack.empty()) {
    const int32_t i = stack.back();
    stack.pop_back();
    const TreeNode& node = tree.nodes[i];
    if (node.is_leaf()) continue;
    if (node.feature >= m.num_features)
      return node_error(m, t, i,
                        str_cat("splits on feature ", node.feature, ", but the model has ",
                                m.num_features, " features"));
    if (std::isnan(node.threshold)) return node_error(m, t, i, "has a NaN threshold");
    for (int32_t c : {node.left, node.right}) {
      if (c < 0 || c >= n)
        return node_error(m, t, i, str_cat("has child ", c, ", outside the tree's ", n, " nodes"));
      if (seen[c])
        return node_error(
            m, t, i,
            str_cat("has child ", c, ", which is already the root or ", "another node's child"));
      seen[c] = 1;
      ++reached;
      stack.push_back(c);
    }
  }
  if (reached != n)
    return tree_error(m, t, str_cat("has ", n - reached, " nodes not reachable from the root"));
  return absl::OkStatus();
}

int tree_depth(const Tree& tree) {
  int depth = 0;
  std::vector<std::pair<int32_t, int>> stack = {{0, 0}};
  while (!stack.empty()) {
    auto [i, d] = stack.back();
    stack.pop_back();
    const TreeNode& node = tree.nodes[i];
    if (node.is_leaf()) {
      depth = std::max(depth, d);
      continue;
    }
    stack.push_back({node.left, d + 1});
    stack.push_back({node.right, d + 1});
  }
  return depth;
}

// LightGBM's kZeroThreshold: a float literal held in a double.
constexpr double kLightGbmZero = static_cast<double>(1e-35f);

bool goes_left(const TreeNode& node, float x) {
  double v = x;
  switch (node.missing) {
    case TreeMissing::nan:
      if (std::isnan(x)) return node.default_left;
      break;
    case TreeMissing::nan_is_zero:
      if (std::isnan(x)) v = 0.0;
      break;
    case TreeMissing::zero_or_nan:
      if (std::isnan(x) || std::fabs(v) <= kLightGbmZero) return node.default_left;
      break;
  }
  switch (node.compare) {
    case TreeCompare::less_f32:
      return static_cast<float>(v) < nearest_float(node.threshold);
    case TreeCompare::less_equal_f32:
      return static_cast<float>(v) <= nearest_float(node.threshold);
    case TreeCompare::less_equal_f64:
      return v <= node.threshold;
    case TreeCompare::less_f64:
      return v < node.threshold;
  }
  return false;
}

}  // namespace

absl::Status validate_tree_ensemble(const TreeEnsemble& m) {
  if (m.num_features <= 0)
    return absl::InvalidArgumentError(
        str_cat(model_label(m), ": the model has ", m.num_features, " features"));
  if (m.num_outputs <= 0)
    return absl::InvalidArgumentError(
        str_cat(model_label(m), ": the model has ", m.num_outputs, " outputs"));
  if (static_cast<int64_t>(m.base_score.size()) != m.num_outputs)
    return absl::InvalidArgumentError(str_cat(model_label(m), ": base_score has ",
                                              m.base_score.size(), " entries, expected ",
                                              m.num_outputs));
  if (m.trees.empty()) return absl::InvalidArgumentError(str_cat(model_label(m), ": no trees"));
  for (size_t t = 0; t < m.trees.size(); ++t)
    if (absl::Status s = validate_tree(m, t); !s.ok()) return s;
  return absl::OkStatus();
}

int tree_ensemble_depth(const TreeEnsemble& model) {
  int depth = 0;
  for (const Tree& t : model.trees) depth = std::max(depth, tree_depth(t));
  return depth;
}

absl::StatusOr<Tensor> evaluate_tree_ensemble(const TreeEnsemble& m, const Tensor& x) {
  if (absl::Status s = validate_tree_ensemble(m); !s.ok()) return s;
  if (x.dtype() != DType::f32 || x.rank() != 2 || x.shape()[1] != m.num_features)
    return absl::InvalidArgumentError(str_cat(model_label(m), ": input is ",
                                              type_to_string(x.type()), ", expected f32[batchx",
                                              m.num_features, "]"));
  const int64_t rows = x.shape()[0];
  const int64_t outs = m.num_outputs;
  Tensor y(DType::f32, {rows, outs});
  std::vector<double> margin(static_cast<size_t>(outs));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data<float>() + r * m.num_features;
    std::fill(margin.begin(), margin.end(), 0.0);
    for (const Tree& tree : m.trees) {
      int32_t i = 0;
      while (!tree.nodes[i].is_leaf()) {
        const TreeNode& node = tree.nodes[i];
        float v = row[node.feature];
        if (std::fabs(v) <= m.zero_threshold) v = 0.f;
        i = goes_left(node, v) ? node.left : node.right;
      }
      margin[tree.output] += tree.nodes[i].value;
    }
    for (int64_t o = 0; o < outs; ++o) margin[o] = m.base_score[o] + m.tree_scale * margin[o];
    float* out = y.data<float>() + r * outs;
    switch (m.post_transform) {
      case TreePostTransform::none:
        for (int64_t o = 0; o < outs; ++o) out[o] = nearest_float(margin[o]);
        break;
      case TreePostTransform::sigmoid:
        for (int64_t o = 0; o < outs; ++o)
          out[o] = static_cast<float>(1.0 / (1.0 + std::exp(-m.sigmoid_scale * margin[o])));
        break;
      case TreePostTransform::exp:
        for (int64_t o = 0; o < outs; ++o) out[o] = nearest_float(std::exp(margin[o]));
        break;
      case TreePostTransform::softmax: {
        double top = margin[0], sum = 0.0;
        for (double v : margin) top = std::max(top, v);
        for (double v : margin) sum += std::exp(v - top);
        for (int64_t o = 0; o < outs; ++o)
          out[o] = static_cast<float>(std::exp(margin[o] - top) / sum);
        break;
      }
    }
  }
  return y;
}

std::string_view tree_strategy_name(TreeStrategy s) {
  switch (s) {
    case TreeStrategy::automatic:
      return "auto";
    case TreeStrategy::gemm:
      return "gemm";
    case TreeStrategy::tree_traversal:
      return "tt";
    case TreeStrategy::perfect_tree_traversal:
      return "ptt";
    case TreeStrategy::fused:
      return "fused";
  }
  return "?";
}

absl::StatusOr<TreeStrategy> parse_tree_strategy(std::string_view name) {
  for (TreeStrategy s : {TreeStrategy::automatic, TreeStrategy::gemm, TreeStrategy::tree_traversal,
                         TreeStrategy::perfect_tree_traversal, TreeStrategy::fused})
    if (name == tree_strategy_name(s)) return s;
  if (name == "tree_traversal") return TreeStrategy::tree_traversal;
  if (name == "perfect_tree_traversal") return TreeStrategy::perfect_tree_traversal;
  return absl::InvalidArgumentError(
      str_cat("unknown tree strategy '", name, "' (expected auto, gemm, tt, ptt or fused)"));
}

TreeStrategy pick_tree_strategy(const TreeEnsemble& model) {
  // The fused operator, where the model allows it, is one kernel on a tuned backend and the
  // fastest choice measured on CPU at every batch size (bench/RESULTS.md). Otherwise Hummingbird's
  // defaults: GEMM evaluates every node, which pays off only for shallow trees; perfect tree
  // traversal pads each tree to 2^depth leaves.
  const int depth = tree_ensemble_depth(model);
  if (depth <= 16 && trees::fused_strategy_supports(model).ok()) return TreeStrategy::fused;
  if (depth <= 3) return TreeStrategy::gemm;
  if (depth <= 10) return TreeStrategy::perfect_tree_traversal;
  return TreeStrategy::tree_traversal;
}

}  // namespace collage
