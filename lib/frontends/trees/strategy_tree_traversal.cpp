// Tree traversal (Hummingbird TT): every row walks every tree one level per step, gathering the
// current node's feature, threshold and children; leaves point at themselves, so after `depth`
// steps each walk rests on its leaf.
#include "collage/ops.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_program.h"
#include "frontends/trees/tree_thresholds.h"
#include "frontends/trees/tree_util.h"

namespace collage::trees {

absl::StatusOr<ValueId> add_tree_traversal_program(GraphBuilder& b, ValueId x,
                                                   const TreeEnsemble& m) {
  const auto trees = static_cast<int64_t>(m.trees.size());
  int64_t total = 0;
  for (const Tree& t : m.trees) total += static_cast<int64_t>(t.nodes.size());
  if (checked_elements({total}) < 0) return too_large("tree traversal", "node table", {total});

  // All trees' nodes in one table; tree t's nodes start at offset[t].
  std::vector<int64_t> feature(total, 0), left(total), right(total), roots(trees);
  std::vector<float> threshold(total, 0.f), band(total, 0.f), value(total, 0.f);
  std::vector<uint8_t> nan_left(total, 0), inf_left(total, 0);
  int64_t offset = 0;
  for (int64_t t = 0; t < trees; ++t) {
    const Tree& tree = m.trees[t];
    roots[t] = offset;
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      const TreeNode& n = tree.nodes[i];
      const int64_t g = offset + static_cast<int64_t>(i);
      if (n.is_leaf()) {
        left[g] = right[g] = g;
        value[g] = nearest_float(n.value);
        continue;
      }
      const FloatSplit s = float_split(m, t, static_cast<int32_t>(i));
      feature[g] = s.feature;
      threshold[g] = s.threshold;
      nan_left[g] = s.nan_left;
      inf_left[g] = s.inf_left;
      band[g] = s.zero_band;
      left[g] = offset + n.left;
      right[g] = offset + n.right;
    }
    offset += static_cast<int64_t>(tree.nodes.size());
  }
  const SplitFeatures needs = split_features(m);
  const int depth = tree_ensemble_depth(m);

  Emitter e(b, "trees_tt");
  // Step 1 reads the roots, whose parameters are known per tree: plain constants of shape
  // [trees] broadcast against the batch, and a Gather along the feature axis.
  auto root_of = [&](const auto& table) {
    std::decay_t<decltype(table)> out(trees);
    for (int64_t t = 0; t < trees; ++t) out[t] = table[roots[t]];
    return out;
  };
  // The node tables are read from step 2 on.
  ValueId table_feature = kNoValue, table_left = kNoValue, table_right = kNoValue;
  SplitValues table;
  if (depth > 1) {
    table_feature = e.i64("feature", {total}, feature);
    table.threshold = e.f32("threshold", {total}, threshold);
    table.nan_left = e.boolean("nan_left", {total}, nan_left);
    if (needs.zero_band) table.zero_band = e.f32("zero_band", {total}, band);
    if (needs.inf_left) table.inf_left = e.boolean("inf_left", {total}, inf_left);
    table_left = e.i64("left", {total}, left);
    table_right = e.i64("right", {total}, right);
  }

  ValueId at = kNoValue;  // i64 [batch, trees]: the node each walk is on
  for (int level = 0; level < depth; ++level) {
    ValueId v, l, r;
    SplitValues s;
    if (level == 0) {
      v = e.op("Gather", {x, e.i64("root_feature", {trees}, root_of(feature))},
               make_attrs<GatherAttrs>([](auto& a) { a.axis = 1; }));
      s.threshold = e.f32("root_threshold", {trees}, root_of(threshold));
      s.nan_left = e.boolean("root_nan_left", {trees}, root_of(nan_left));
      if (needs.zero_band) s.zero_band = e.f32("root_zero_band", {trees}, root_of(band));
      if (needs.inf_left) s.inf_left = e.boolean("root_inf_left", {trees}, root_of(inf_left));
      l = e.i64("root_left", {trees}, root_of(left));
      r = e.i64("root_right", {trees}, root_of(right));
    } else {
      v = e.op("GatherElements", {x, e.op("Gather", {table_feature, at})},
               make_attrs<GatherElementsAttrs>([](auto& a) { a.axis = 1; }));
      s.threshold = e.op("Gather", {table.threshold, at});
      s.nan_left = e.op("Gather", {table.nan_left, at});
      if (needs.zero_band) s.zero_band = e.op("Gather", {table.zero_band, at});
      if (needs.inf_left) s.inf_left = e.op("Gather", {table.inf_left, at});
      l = e.op("Gather", {table_left, at});
      r = e.op("Gather", {table_right, at});
    }
    at = e.op("Where", {add_decision(e, v, s), l, r});
  }
  const ValueId leaves = e.op("Gather", {e.f32("leaf_value", {total}, value), at});
  const ValueId out = add_leaf_sum(e, leaves, m);
  if (!e.status().ok()) return e.status();
  return out;
}

}  // namespace collage::trees
