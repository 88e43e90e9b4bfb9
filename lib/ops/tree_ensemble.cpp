// TreeEnsemble (collage): a whole ensemble of perfect binary trees walked for every row, the fused
// form of the perfect-tree-traversal program that tuned backends implement as one kernel.
#include "collage/ops/trees.h"
#include "core/str_cat.h"
#include "ops/elementwise_common.h"
#include "ops/tree_ops.h"

namespace collage::ops {
namespace {

// Inputs, in order.
enum : int { kX, kFeature, kThreshold, kNanLeft, kLeaf, kTreeOutput, kBase, kInputs };

absl::Status infer_tree_ensemble(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  const DType want[kInputs] = {DType::f32, DType::i32, DType::f32, DType::boolean,
                               DType::f32, DType::i32, DType::f32};
  const int rank[kInputs] = {2, 2, 2, 2, 2, 1, 1};
  const char* names[kInputs] = {"X",    "feature",     "threshold", "nan_left",
                                "leaf", "tree_output", "base"};
  for (int i = 0; i < kInputs; ++i) {
    const TensorType& t = ctx.input(i);
    if (t.dtype != want[i] || static_cast<int>(t.shape.size()) != rank[i])
      return ctx.error(str_cat(names[i], " is ", type_to_string(t), ", expected ",
                               dtype_name(want[i]), " of rank ", rank[i]));
  }
  const Shape& nodes = ctx.input(kFeature).shape;
  const int64_t trees = nodes[0], internal = nodes[1];
  if ((internal + 1) & internal)
    return ctx.error(
        str_cat("feature has ", internal, " nodes per tree; a perfect tree has 2^depth - 1"));
  if (ctx.input(kThreshold).shape != nodes || ctx.input(kNanLeft).shape != nodes)
    return ctx.error(str_cat("threshold ", type_to_string(ctx.input(kThreshold)), " and nan_left ",
                             type_to_string(ctx.input(kNanLeft)), " must have feature's shape [",
                             trees, "x", internal, "]"));
  if (ctx.input(kLeaf).shape != Shape{trees, internal + 1})
    return ctx.error(str_cat("leaf is ", type_to_string(ctx.input(kLeaf)), ", expected f32[", trees,
                             "x", internal + 1, "]"));
  if (ctx.input(kTreeOutput).shape != Shape{trees})
    return ctx.error(str_cat("tree_output is ", type_to_string(ctx.input(kTreeOutput)),
                             ", expected i32[", trees, "]"));
  ctx.set_output(0, {DType::f32, {ctx.input(kX).shape[0], ctx.input(kBase).shape[0]}});
  return absl::OkStatus();
}

absl::Status run_tree_ensemble(const KernelArgs& k) {
  const Tensor& x = k.inputs[kX];
  const int64_t batch = x.shape()[0], features = x.shape()[1];
  const int64_t trees = k.inputs[kFeature].shape()[0], internal = k.inputs[kFeature].shape()[1];
  const int64_t outputs = k.inputs[kBase].shape()[0];
  const auto* feature = k.inputs[kFeature].data<int32_t>();
  const auto* threshold = k.inputs[kThreshold].data<float>();
  const auto* nan_left = k.inputs[kNanLeft].data<uint8_t>();
  const auto* leaf = k.inputs[kLeaf].data<float>();
  const auto* tree_output = k.inputs[kTreeOutput].data<int32_t>();
  for (int64_t i = 0; i < trees * internal; ++i)
    if (feature[i] < 0 || feature[i] >= features)
      return absl::InvalidArgumentError(str_cat("TreeEnsemble: feature[", i / internal, "][",
                                                i % internal, "] = ", feature[i],
                                                " is outside [0, ", features, ")"));
  for (int64_t t = 0; t < trees; ++t)
    if (tree_output[t] < 0 || tree_output[t] >= outputs)
      return absl::InvalidArgumentError(str_cat("TreeEnsemble: tree_output[", t, "] = ",
                                                tree_output[t], " is outside [0, ", outputs, ")"));
  float* y = k.outputs[0].data<float>();
  for (int64_t r = 0; r < batch; ++r) {
    const float* row = x.data<float>() + r * features;
    float* out = y + r * outputs;
    for (int64_t o = 0; o < outputs; ++o) out[o] = k.inputs[kBase].data<float>()[o];
    for (int64_t t = 0; t < trees; ++t) {
      int64_t node = 0;
      while (node < internal) {
        const int64_t at = t * internal + node;
        const float v = row[feature[at]];
        const bool left = v != v ? nan_left[at] != 0 : !(v >= threshold[at]);
        node = 2 * node + (left ? 1 : 2);
      }
      out[tree_output[t]] += leaf[t * (internal + 1) + (node - internal)];
    }
  }
  return absl::OkStatus();
}

}  // namespace

void register_tree_ensemble_op(OpRegistry& r) {
  add_builtin_op(r, make_op<TreeEnsembleAttrs>("TreeEnsemble", FusionKind::opaque, kInputs, kInputs,
                                               infer_tree_ensemble, run_tree_ensemble));
}

}  // namespace collage::ops
