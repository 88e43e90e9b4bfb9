// Batch-norm folding: the Conv + BatchNormalization rewrite pattern.
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
  if (!conv) return no_match(failure_at(bn, "input is not produced by a Conv"));
  const Tensor* w = g.constant_of(conv->inputs[1]);
  if (!w || w->dtype() != DType::f32)
    return no_match(failure_at(*conv, "weight is not an f32 constant"));
  const int64_t channels = w->shape()[0];
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
  m.emit = [&g, conv, w, bias, params, epsilon, channels, root](GraphRebuilder& rb) {
    const float* scale = params[0]->data<float>();
    const float* shift = params[1]->data<float>();
    const float* mean = params[2]->data<float>();
    const float* var = params[3]->data<float>();
    Tensor new_w(DType::f32, w->shape());
    Tensor new_b(DType::f32, {channels});
    const int64_t per_channel = w->numel() / channels;
    for (int64_t c = 0; c < channels; ++c) {
      const double s = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
      const float* src = w->data<float>() + c * per_channel;
      float* dst = new_w.data<float>() + c * per_channel;
      for (int64_t k = 0; k < per_channel; ++k) dst[k] = static_cast<float>(src[k] * s);
      const double b = bias ? bias->data<float>()[c] : 0.0;
      new_b.data<float>()[c] = static_cast<float>((b - mean[c]) * s + shift[c]);
    }
    const std::string& w_name = g.value(conv->inputs[1]).name;
    ValueId wv = rb.builder().add_constant(str_cat(w_name, "_bn_folded"), std::move(new_w));
    ValueId bv = rb.builder().add_constant(str_cat(conv->name, "_bias_bn_folded"), std::move(new_b));
    return rb.add_node_for(root, conv->name, "Conv", {rb.map(conv->inputs[0]), wv, bv}, conv->attrs)
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
