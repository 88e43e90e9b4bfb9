// From a tree ensemble to a graph: the chosen strategy's margins, then base score and post
// transform.
#include "collage/ops.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_program.h"
#include "frontends/trees/tree_thresholds.h"
#include "frontends/trees/tree_util.h"

namespace collage {

absl::StatusOr<ValueId> add_tree_ensemble(GraphBuilder& b, ValueId x, const TreeEnsemble& m,
                                          const TreeGraphOptions& options) {
  if (absl::Status s = validate_tree_ensemble(m); !s.ok()) return s;
  const TensorType xt = b.value(x).type;
  if (xt.dtype != DType::f32 || xt.shape.size() != 2 || xt.shape[1] != m.num_features)
    return absl::InvalidArgumentError(str_cat(model_label(m), ": input '", b.value(x).name, "' is ",
                                              type_to_string(xt), ", expected f32[batchx",
                                              m.num_features, "]"));
  const int64_t batch = xt.shape[0];
  const TreeStrategy strategy =
      options.strategy == TreeStrategy::automatic ? pick_tree_strategy(m) : options.strategy;

  trees::Emitter e(b, "trees");
  ValueId margin = kNoValue;
  if (tree_ensemble_depth(m) == 0) {
    // Every tree is a single leaf: the margins do not depend on the input.
    std::vector<float> sum(static_cast<size_t>(m.num_outputs), 0.f);
    std::vector<double> acc(static_cast<size_t>(m.num_outputs), 0.0);
    for (const Tree& t : m.trees) acc[t.output] += t.nodes[0].value;
    for (int64_t o = 0; o < m.num_outputs; ++o)
      sum[o] = nearest_float(m.base_score[o] + m.tree_scale * acc[o]);
    margin = e.op("Expand", {e.f32("constant_margin", {1, m.num_outputs}, sum)},
                  make_attrs<ExpandAttrs>([&](auto& a) {
                    a.shape = {batch, m.num_outputs};
                  }));
  } else {
    ValueId input = x;
    // The fused program folds the zero rule into its thresholds.
    if (m.zero_threshold > 0.0 && strategy != TreeStrategy::fused) {
      // |x| <= zero_threshold reads as 0 (NaN fails the test and stays NaN).
      const ValueId small =
          e.op("Less", {e.op("Abs", {x}), e.scalar_f32(float_bound_less_equal(m.zero_threshold))});
      input = e.op("Where", {small, e.scalar_f32(0.f), x});
      if (!e.status().ok()) return e.status();
    }
    std::vector<float> base;
    bool has_base = false;
    for (double v : m.base_score) base.push_back(nearest_float(v));
    for (float v : base) has_base |= v != 0.f;
    absl::StatusOr<ValueId> sum;
    switch (strategy) {
      case TreeStrategy::fused:
        // TreeEnsemble starts each row's sums from the base score.
        sum = trees::add_fused_program(b, input, m, base);
        has_base = false;
        break;
      case TreeStrategy::gemm:
        sum = trees::add_gemm_program(b, input, m);
        break;
      case TreeStrategy::tree_traversal:
      case TreeStrategy::automatic:
        sum = trees::add_tree_traversal_program(b, input, m);
        break;
      case TreeStrategy::perfect_tree_traversal:
        sum = trees::add_perfect_tree_traversal_program(b, input, m);
        break;
    }
    if (!sum.ok()) return sum.status();
    margin = *sum;
    if (has_base) margin = e.op("Add", {margin, e.f32("base_score", {m.num_outputs}, base)});
  }
  ValueId out = margin;
  if (!options.output_margin) {
    switch (m.post_transform) {
      case TreePostTransform::none:
        break;
      case TreePostTransform::sigmoid:
        if (m.sigmoid_scale != 1.0)
          out = e.op("Mul", {out, e.scalar_f32(nearest_float(m.sigmoid_scale))});
        out = e.op("Sigmoid", {out});
        break;
      case TreePostTransform::softmax:
        out = e.op("Softmax", {out}, make_attrs<SoftmaxAttrs>([](auto& a) { a.axis = -1; }));
        break;
      case TreePostTransform::exp:
        out = e.op("Exp", {out});
        break;
    }
  }
  if (!e.status().ok()) return e.status();
  return out;
}

absl::StatusOr<Graph> build_tree_graph(const Context& ctx, const TreeEnsemble& model,
                                       TreeStrategy strategy, int64_t batch,
                                       const TreeGraphOptions& options) {
  if (batch <= 0)
    return absl::InvalidArgumentError(
        str_cat(model_label(model), ": batch size ", batch, ", expected at least 1"));
  GraphBuilder b(ctx, model.name.empty() ? "trees" : model.name);
  const ValueId x = b.add_input("input", {DType::f32, {batch, model.num_features}});
  TreeGraphOptions o = options;
  o.strategy = strategy;
  auto y = add_tree_ensemble(b, x, model, o);
  if (!y.ok()) return y.status();
  b.set_value_name(*y, "predictions");
  b.add_output(*y);
  return b.finish();
}

}  // namespace collage
