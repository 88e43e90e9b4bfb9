// GEMM (Hummingbird): every internal node of every tree is evaluated with matrix products.
//   A [features, trees*I]  selects each node's feature (one 1 per column), B [trees*I] thresholds
//   C [trees, I, L]        +1 when leaf l lies left of node i, -1 when right, else 0
//   D [trees, 1, L]        the number of left turns on the way to leaf l
//   E [trees*L, outputs]   leaf values, in the column of the tree's output
// T = (X A < B); leaf l of a tree is reached exactly when (T C)_l == D_l, since a leaf collects
// +1 for every left turn taken and can only lose by a wrong turn. Trees are padded to the largest
// internal-node count I and leaf count L; padded nodes have zero columns and padded leaves
// D = -1, which no sum reaches.
//
// X A multiplies by 0 and 1, which is exact for finite x but turns NaN and infinities into NaN
// across the whole row, so those are replaced by 0 before the product and described by a code
// matrix (0 finite, 1 NaN, 2 +inf, 3 -inf) that goes through the same selection; where a node's
// code is not 0, its direction comes from a 4-row table instead of the comparison.
#include <cmath>
#include <limits>

#include "collage/ops.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_program.h"
#include "frontends/trees/tree_thresholds.h"
#include "frontends/trees/tree_util.h"

namespace collage::trees {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Internal nodes and leaves of one tree in the order GEMM numbers them (preorder).
struct TreeOrder {
  std::vector<int32_t> internal, leaves;
};

TreeOrder order_of(const Tree& tree) {
  TreeOrder o;
  std::vector<int32_t> stack = {0};
  while (!stack.empty()) {
    const int32_t i = stack.back();
    stack.pop_back();
    const TreeNode& n = tree.nodes[i];
    if (n.is_leaf()) {
      o.leaves.push_back(i);
      continue;
    }
    o.internal.push_back(i);
    stack.push_back(n.right);
    stack.push_back(n.left);
  }
  return o;
}

}  // namespace

absl::StatusOr<ValueId> add_gemm_program(GraphBuilder& b, ValueId x, const TreeEnsemble& m) {
  const auto trees = static_cast<int64_t>(m.trees.size());
  const int64_t features = m.num_features, outputs = m.num_outputs;
  std::vector<TreeOrder> orders;
  int64_t ni = 0, nl = 0;
  for (const Tree& t : m.trees) {
    orders.push_back(order_of(t));
    ni = std::max<int64_t>(ni, static_cast<int64_t>(orders.back().internal.size()));
    nl = std::max<int64_t>(nl, static_cast<int64_t>(orders.back().leaves.size()));
  }
  if (checked_elements({features, trees, ni}) < 0)
    return too_large("GEMM", "feature selection A", {features, trees * ni});
  if (checked_elements({trees, ni, nl}) < 0)
    return too_large("GEMM", "path matrix C", {trees, ni, nl});
  if (checked_elements({trees, nl, outputs}) < 0)
    return too_large("GEMM", "leaf values E", {trees * nl, outputs});

  const int64_t cols = trees * ni;
  std::vector<float> a(static_cast<size_t>(features * cols), 0.f), thr(cols, 0.f), band(cols, 0.f),
      c(static_cast<size_t>(trees * ni * nl), 0.f), d(trees * nl, -1.f),
      e_values(static_cast<size_t>(trees * nl * outputs), 0.f);
  // Rows of the special-value table: 0 unused (finite x), 1 NaN, 2 +inf, 3 -inf.
  std::vector<uint8_t> special(static_cast<size_t>(4 * cols), 0), nan_left(cols, 0);
  for (int64_t t = 0; t < trees; ++t) {
    const Tree& tree = m.trees[t];
    const TreeOrder& o = orders[t];
    std::vector<int64_t> slot(tree.nodes.size(), -1);  // node -> internal or leaf position
    for (size_t k = 0; k < o.internal.size(); ++k) slot[o.internal[k]] = static_cast<int64_t>(k);
    for (size_t k = 0; k < o.leaves.size(); ++k) slot[o.leaves[k]] = static_cast<int64_t>(k);
    for (size_t k = 0; k < o.internal.size(); ++k) {
      const FloatSplit s = float_split(m, static_cast<size_t>(t), o.internal[k]);
      const int64_t col = t * ni + static_cast<int64_t>(k);
      a[s.feature * cols + col] = 1.f;
      thr[col] = s.threshold;
      band[col] = s.zero_band;
      nan_left[col] = s.nan_left;
      special[1 * cols + col] = s.nan_left;
      special[2 * cols + col] = s.inf_left;
      special[3 * cols + col] = -kInf < s.threshold;
    }
    // C and D from each leaf's path, walked up through the parents.
    std::vector<int32_t> parent(tree.nodes.size(), -1);
    for (int32_t i : o.internal) {
      parent[tree.nodes[i].left] = i;
      parent[tree.nodes[i].right] = i;
    }
    for (int32_t leaf : o.leaves) {
      int lefts = 0;
      for (int32_t child = leaf, up = parent[leaf]; up >= 0; child = up, up = parent[up]) {
        const bool went_left = tree.nodes[up].left == child;
        c[(t * ni + slot[up]) * nl + slot[leaf]] = went_left ? 1.f : -1.f;
        lefts += went_left;
      }
      d[t * nl + slot[leaf]] = static_cast<float>(lefts);
      e_values[(t * nl + slot[leaf]) * outputs + tree.output] =
          nearest_float(tree.nodes[leaf].value * m.tree_scale);
    }
  }

  Emitter e(b, "trees_gemm");
  const bool banded = split_features(m).zero_band;
  // Finite inputs pass through; NaN and infinities become 0 plus a code.
  const ValueId finite = e.op("Less", {e.op("Abs", {x}), e.scalar_f32(kInf)});
  const ValueId zero = e.scalar_f32(0.f);
  const ValueId xf = e.op("Where", {finite, x, zero});
  const ValueId infinite_code =
      e.op("Where", {e.op("Greater", {x, zero}), e.scalar_f32(2.f), e.scalar_f32(3.f)});
  const ValueId code = e.op(
      "Where",
      {finite, zero, e.op("Where", {e.op("Equal", {x, x}), infinite_code, e.scalar_f32(1.f)})});
  const ValueId sel = e.f32("A", {features, cols}, a);
  const ValueId values = e.op("MatMul", {xf, sel});
  ValueId left = e.op("Less", {values, e.f32("B", {cols}, thr)});
  if (banded) {
    const ValueId in_band = e.op("Less", {e.op("Abs", {values}), e.f32("zero_band", {cols}, band)});
    left = e.op("Where", {in_band, e.boolean("nan_left", {cols}, nan_left), left});
  }
  const ValueId node_code = e.op("MatMul", {code, sel});
  const ValueId special_dir =
      e.op("GatherElements",
           {e.boolean("special_left", {4, cols}, special),
            e.op("Cast", {node_code}, make_attrs<CastAttrs>([](auto& a) { a.to = "i64"; }))},
           make_attrs<GatherElementsAttrs>([](auto& a) { a.axis = 0; }));
  left = e.op("Where", {e.op("Greater", {node_code, e.scalar_f32(0.5f)}), special_dir, left});

  // [batch, trees*I] -> [trees, batch, I] for one product per tree.
  const int64_t batch = e.type(x).shape[0];
  ValueId tl = e.op("Cast", {left}, make_attrs<CastAttrs>([](auto& a) { a.to = "f32"; }));
  tl = e.op("Reshape", {tl}, make_attrs<ReshapeAttrs>([&](auto& a) {
              a.shape = {batch, trees, ni};
            }));
  tl = e.op("Transpose", {tl}, make_attrs<TransposeAttrs>([](auto& a) { a.perm = {1, 0, 2}; }));
  const ValueId turns = e.op("MatMul", {tl, e.f32("C", {trees, ni, nl}, c)});
  ValueId reached = e.op("Cast", {e.op("Equal", {turns, e.f32("D", {trees, 1, nl}, d)})},
                         make_attrs<CastAttrs>([](auto& a) { a.to = "f32"; }));
  reached = e.op("Transpose", {reached}, make_attrs<TransposeAttrs>([](auto& a) {
                   a.perm = {1, 0, 2};
                 }));
  reached = e.op("Reshape", {reached}, make_attrs<ReshapeAttrs>([&](auto& a) {
                   a.shape = {batch, trees * nl};
                 }));
  const ValueId out = e.op("MatMul", {reached, e.f32("E", {trees * nl, outputs}, e_values)});
  if (!e.status().ok()) return e.status();
  return out;
}

}  // namespace collage::trees
