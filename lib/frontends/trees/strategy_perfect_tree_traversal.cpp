// Perfect tree traversal (Hummingbird PTT): every tree is padded to a perfect binary tree of the
// ensemble's depth, so a node's children sit at 2i and 2i+1 of the next level and the walk needs
// no child tables. A leaf above the bottom level becomes a subtree of placeholder splits whose
// leaves all hold its value.
#include "collage/ops.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_program.h"
#include "frontends/trees/tree_thresholds.h"
#include "frontends/trees/tree_util.h"

namespace collage::trees {
namespace {

// Level l holds 2^l nodes per tree; node p of tree t is entry t * 2^l + p, so the step
// i -> 2i + (right ? 1 : 0) moves within the tree.
struct PerfectLayout {
  int depth = 0;
  std::vector<std::vector<int64_t>> feature;
  std::vector<std::vector<float>> threshold, band;
  std::vector<std::vector<uint8_t>> nan_left, inf_left;
  std::vector<float> leaves;
};

void place(const TreeEnsemble& m, PerfectLayout& p, int64_t t, int32_t i, int level, int64_t pos) {
  const TreeNode& n = m.trees[t].nodes[i];
  if (n.is_leaf()) {
    const int64_t width = int64_t{1} << (p.depth - level);
    const int64_t first = (t << p.depth) + pos * width;
    std::fill(p.leaves.begin() + first, p.leaves.begin() + first + width, nearest_float(n.value));
    return;
  }
  const FloatSplit s = float_split(m, static_cast<size_t>(t), i);
  const int64_t k = (t << level) + pos;
  p.feature[level][k] = s.feature;
  p.threshold[level][k] = s.threshold;
  p.nan_left[level][k] = s.nan_left;
  p.inf_left[level][k] = s.inf_left;
  p.band[level][k] = s.zero_band;
  place(m, p, t, n.left, level + 1, 2 * pos);
  place(m, p, t, n.right, level + 1, 2 * pos + 1);
}

}  // namespace

absl::StatusOr<ValueId> add_perfect_tree_traversal_program(GraphBuilder& b, ValueId x,
                                                           const TreeEnsemble& m) {
  const auto trees = static_cast<int64_t>(m.trees.size());
  PerfectLayout p;
  p.depth = tree_ensemble_depth(m);
  const int64_t leaf_slots =
      p.depth < 40 ? checked_elements({trees, int64_t{1} << p.depth}) : int64_t{-1};
  if (leaf_slots < 0)
    return absl::ResourceExhaustedError(str_cat("perfect tree traversal: ", trees,
                                                " trees padded to depth ", p.depth, " would need ",
                                                trees, " x 2^", p.depth, " leaves, more than ",
                                                kMaxConstantElements, "; use tree traversal"));
  p.leaves.assign(static_cast<size_t>(leaf_slots), 0.f);
  for (int l = 0; l < p.depth; ++l) {
    const auto width = static_cast<size_t>(trees << l);
    p.feature.emplace_back(width, 0);
    p.threshold.emplace_back(width, 0.f);
    p.band.emplace_back(width, 0.f);
    p.nan_left.emplace_back(width, 0);
    p.inf_left.emplace_back(width, 0);
  }
  for (int64_t t = 0; t < trees; ++t) place(m, p, t, 0, 0, 0);
  const SplitFeatures needs = split_features(m);

  Emitter e(b, "trees_ptt");
  ValueId at = kNoValue;  // i64 [batch, trees]: position within the level's table
  for (int level = 0; level < p.depth; ++level) {
    const int64_t width = trees << level;
    const std::string lv = str_cat("level", level, "_");
    ValueId v, step;
    SplitValues s;
    if (level == 0) {
      // The roots are known per tree: constants broadcast against the batch.
      v = e.op("Gather", {x, e.i64(lv + "feature", {trees}, p.feature[0])},
               make_attrs<GatherAttrs>([](auto& a) { a.axis = 1; }));
      std::vector<int64_t> twice(trees);
      for (int64_t t = 0; t < trees; ++t) twice[t] = 2 * t;
      step = e.i64("root_child", {trees}, twice);
    } else {
      v = e.op("GatherElements",
               {x, e.op("Gather", {e.i64(lv + "feature", {width}, p.feature[level]), at})},
               make_attrs<GatherElementsAttrs>([](auto& a) { a.axis = 1; }));
      step = e.op("Mul", {at, e.scalar_i64(2)});
    }
    // Level 0 uses the [trees] tables as they are; deeper levels gather them per walk.
    auto per_node = [&](ValueId table) { return level == 0 ? table : e.op("Gather", {table, at}); };
    s.threshold = per_node(e.f32(lv + "threshold", {width}, p.threshold[level]));
    s.nan_left = per_node(e.boolean(lv + "nan_left", {width}, p.nan_left[level]));
    if (needs.zero_band) s.zero_band = per_node(e.f32(lv + "zero_band", {width}, p.band[level]));
    if (needs.inf_left)
      s.inf_left = per_node(e.boolean(lv + "inf_left", {width}, p.inf_left[level]));
    const ValueId right = e.op("Where", {add_decision(e, v, s), e.scalar_i64(0), e.scalar_i64(1)});
    at = e.op("Add", {step, right});
  }
  const ValueId leaves = e.op("Gather", {e.f32("leaf_value", {leaf_slots}, p.leaves), at});
  const ValueId out = add_leaf_sum(e, leaves, m);
  if (!e.status().ok()) return e.status();
  return out;
}

}  // namespace collage::trees
