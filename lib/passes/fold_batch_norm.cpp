// Batch-norm folding: the Conv (or ConvTranspose) + BatchNormalization rewrite pattern.
#include "passes/fold_batch_norm.h"

#include <cmath>

#include "collage/ops/nn.h"
#include "core/str_cat.h"

namespace collage::passes {
namespace {

MatchResult match_batch_norm_into_conv(const Graph& g, NodeId root) {
  const Node& bn = g.node(root);
  if (bn.get<BatchNormalizationAttrs>().training_mode != 0)
    return no_match(failure_at(bn, "training mode"));
  const Node* conv = producer_of(g, bn.inputs[0], "Conv");
  if (!conv) conv = producer_of(g, bn.inputs[0], "ConvTranspose");
  if (!conv) return no_match(failure_at(bn, "input is not produced by a Conv or ConvTranspose"));
  const Tensor* w = g.constant_of(conv->inputs[1]);
  if (!w || w->dtype() != DType::f32 || w->shape().size() < 2)
    return no_match(failure_at(*conv, "weight is not an f32 constant"));
  // A Conv's weight is [M, C/group, k...]; a ConvTranspose's [C, M/group, k...]: output channel
  // m of group i is column m - i * M/group of that group's rows.
  const bool transposed = conv->op_name() == "ConvTranspose";
  const int64_t group = transposed ? conv->get<ConvTransposeAttrs>().group : 1;
  if (group < 1 || w->shape()[0] % group != 0)
    return no_match(failure_at(*conv, "group does not divide the weight's rows"));
  const int64_t channels = transposed ? w->shape()[1] * group : w->shape()[0];
  const bool has_bias = conv->inputs.size() > 2 && conv->inputs[2] != kNoValue;
  const Tensor* bias = has_bias ? g.constant_of(conv->inputs[2]) : nullptr;
  if (has_bias && (!bias || bias->dtype() != DType::f32 || bias->numel() != channels))
    return no_match(failure_at(*conv, "bias is not an f32 constant with one value per channel"));
  // scale, B, mean, var: one f32 constant value per output channel each.
  std::vector<const Tensor*> params;
  for (size_t i = 1; i < 5; ++i) {
    const Tensor* t = g.constant_of(bn.inputs[i]);
    if (!t || t->dtype() != DType::f32 || t->numel() != channels)
      return no_match(failure_at(bn, str_cat("input ", i, " ('", g.value(bn.inputs[i]).name,
                                             "') is not an f32 constant of ", channels,
                                             " values")));
    params.push_back(t);
  }
  const double epsilon = bn.get<BatchNormalizationAttrs>().epsilon;

  RewriteMatch m;
  m.nodes = {node_id(g, *conv), root};
  m.emit = [&g, conv, w, bias, params, epsilon, channels, transposed, group,
            root](GraphRebuilder& rb) {
    const float* scale = params[0]->data<float>();
    const float* shift = params[1]->data<float>();
    const float* mean = params[2]->data<float>();
    const float* var = params[3]->data<float>();
    Tensor new_w(DType::f32, w->shape());
    Tensor new_b(DType::f32, {channels});
    std::vector<double> s(channels);
    for (int64_t c = 0; c < channels; ++c) {
      s[c] = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
      const double b = bias ? bias->data<float>()[c] : 0.0;
      new_b.data<float>()[c] = static_cast<float>((b - mean[c]) * s[c] + shift[c]);
    }
    // Rows of the weight (its first axis), columns (the second), taps: the output channel of
    // each element is its row for a Conv, its group's first channel plus its column for a
    // ConvTranspose.
    const int64_t rows = w->shape()[0], cols = w->shape()[1];
    const int64_t taps = w->numel() / (rows * cols);
    const float* src = w->data<float>();
    float* dst = new_w.data<float>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t out = transposed ? r / (rows / group) * cols + c : r;
        const int64_t at = (r * cols + c) * taps;
        for (int64_t k = 0; k < taps; ++k) dst[at + k] = static_cast<float>(src[at + k] * s[out]);
      }
    const std::string& w_name = g.value(conv->inputs[1]).name;
    ValueId wv = rb.builder().add_constant(str_cat(w_name, "_bn_folded"), std::move(new_w));
    ValueId bv = rb.builder().add_constant(str_cat(conv->name, "_bias_bn_folded"), std::move(new_b));
    return rb
        .add_node_for(root, conv->name, std::string(conv->op_name()),
                      {rb.map(conv->inputs[0]), wv, bv}, conv->attrs)
        .status();
  };
  return {std::move(m), ""};
}

}  // namespace

RewritePattern batch_norm_into_conv_pattern() {
  return {"batch_norm_into_conv", "BatchNormalization", 1, match_batch_norm_into_conv};
}

PassResult fold_batch_norm(const Context& ctx, const Graph& g, const RewriteOptions& options) {
  const RewritePattern patterns[] = {batch_norm_into_conv_pattern()};
  return apply_rewrites(ctx, g, patterns, options);
}

}  // namespace collage::passes
