// The fused strategy: the perfect-tree layout handed to one TreeEnsemble operator, which tuned
// backends run as a single kernel (rows blocked, trees interleaved) and the reference executor
// walks row by row. LightGBM's zero rule is folded into the thresholds, so the operator reads the
// input as it is.
#include <cmath>
#include <limits>

#include "collage/ops.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_program.h"
#include "frontends/trees/tree_thresholds.h"
#include "frontends/trees/tree_util.h"

namespace collage::trees {
namespace {

// Tables of TreeEnsemble: tree t's node k (level order, children of k at 2k+1 and 2k+2) is entry
// t * internal + k; its leaf j is entry t * (internal + 1) + j.
struct FusedLayout {
  int64_t internal = 0;
  std::vector<int32_t> feature;
  std::vector<float> threshold, leaf;
  std::vector<uint8_t> nan_left;
};

// The threshold t2 such that x < t2 exactly when x' < t, where x' is x read through the zero
// rule (0 when |x| < b, b = float_bound_less_equal(zero_threshold), else x), for every float32 x;
// NaN fails both tests alike. The band (-b, b) goes left when 0 < t and right otherwise; a NaN
// t (every x but NaN left) stays NaN.
float with_zero_rule(float t, double zero_threshold) {
  const float b = float_bound_less_equal(zero_threshold);
  if (!(b > 0.f)) return t;           // an empty band
  if (t > 0.f) return t < b ? b : t;  // x < t or in the band
  return t > -b ? std::nextafter(-b, std::numeric_limits<float>::infinity()) : t;  // x <= -b
}

void place(const TreeEnsemble& m, FusedLayout& p, int64_t t, int32_t i, int level, int64_t pos,
           int depth) {
  const TreeNode& n = m.trees[t].nodes[i];
  if (n.is_leaf()) {
    // A leaf above the bottom level fills its whole subtree; the placeholder splits above those
    // slots (feature 0, threshold 0) lead to the same value whichever way they go.
    const int64_t width = int64_t{1} << (depth - level);
    const int64_t first = t * (p.internal + 1) + pos * width;
    const float v = nearest_float(n.value * m.tree_scale);
    std::fill(p.leaf.begin() + first, p.leaf.begin() + first + width, v);
    return;
  }
  const FloatSplit s = float_split(m, static_cast<size_t>(t), i);
  const int64_t k = t * p.internal + ((int64_t{1} << level) - 1) + pos;
  p.feature[k] = s.feature;
  // `x <= +inf` (inf_left) is TreeEnsemble's NaN threshold: every x but NaN goes left.
  const float bound = s.inf_left ? std::numeric_limits<float>::quiet_NaN() : s.threshold;
  p.threshold[k] = m.zero_threshold > 0.0 ? with_zero_rule(bound, m.zero_threshold) : bound;
  p.nan_left[k] = s.nan_left;
  place(m, p, t, n.left, level + 1, 2 * pos, depth);
  place(m, p, t, n.right, level + 1, 2 * pos + 1, depth);
}

}  // namespace

absl::Status fused_strategy_supports(const TreeEnsemble& m) {
  if (split_features(m).zero_band)
    return absl::UnimplementedError(
        str_cat(model_label(m),
                ": the fused strategy has no zero-as-missing band (LightGBM "
                "MissingType::Zero); use tt, ptt or gemm"));
  const int depth = tree_ensemble_depth(m);
  const auto trees = static_cast<int64_t>(m.trees.size());
  if (depth >= 31 || checked_elements({trees, int64_t{1} << depth}) < 0)
    return too_large("fused", "perfect-tree leaf table",
                     {trees, depth >= 31 ? -1 : int64_t{1} << depth});
  return absl::OkStatus();
}

absl::StatusOr<ValueId> add_fused_program(GraphBuilder& b, ValueId x, const TreeEnsemble& m,
                                          const std::vector<float>& base) {
  if (absl::Status s = fused_strategy_supports(m); !s.ok()) return s;
  const int depth = tree_ensemble_depth(m);
  const auto trees = static_cast<int64_t>(m.trees.size());
  FusedLayout p;
  p.internal = (int64_t{1} << depth) - 1;
  p.feature.assign(static_cast<size_t>(trees * p.internal), 0);
  p.threshold.assign(p.feature.size(), 0.f);
  p.nan_left.assign(p.feature.size(), 0);
  p.leaf.assign(static_cast<size_t>(trees * (p.internal + 1)), 0.f);
  std::vector<int32_t> tree_output;
  for (int64_t t = 0; t < trees; ++t) {
    place(m, p, t, 0, 0, 0, depth);
    tree_output.push_back(m.trees[t].output);
  }
  Emitter e(b, "trees_fused");
  Tensor feature(DType::i32, {trees, p.internal}), outputs(DType::i32, {trees});
  std::copy(p.feature.begin(), p.feature.end(), feature.data<int32_t>());
  std::copy(tree_output.begin(), tree_output.end(), outputs.data<int32_t>());
  const ValueId y = e.op("TreeEnsemble", {x, e.constant("feature", std::move(feature)),
                                          e.f32("threshold", {trees, p.internal}, p.threshold),
                                          e.boolean("nan_left", {trees, p.internal}, p.nan_left),
                                          e.f32("leaf", {trees, p.internal + 1}, p.leaf),
                                          e.constant("tree_output", std::move(outputs)),
                                          e.f32("base_score", {m.num_outputs}, base)});
  if (!e.status().ok()) return e.status();
  return y;
}

}  // namespace collage::trees
