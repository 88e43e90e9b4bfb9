// BatchNormalization (inference), InstanceNormalization and LayerNormalization.
#include <algorithm>
#include <cmath>
#include <vector>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/nn_ops.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

// Checks that input `i` (named `name`) is a vector of `channels` elements.
absl::Status require_channel_vector(const InferContext& ctx, int i, const char* name,
                                    int64_t channels) {
  if (ctx.input(i).shape == Shape{channels}) return absl::OkStatus();
  return ctx.error(str_cat("input ", name, " has shape ", list_to_string(ctx.input(i).shape),
                           ", expected [", channels, "] (the channels of X ",
                           list_to_string(ctx.input(0).shape), ")"));
}

absl::Status infer_batch_norm(InferContext& ctx) {
  const auto& a = ctx.attrs<BatchNormalizationAttrs>();
  if (absl::Status s = require_f32(ctx, {"X", "scale", "B", "input_mean", "input_var"}); !s.ok())
    return s;
  if (a.training_mode != 0)
    return ctx.error(
        str_cat("training_mode=", a.training_mode, " is not supported (inference only)"));
  if (ctx.requested_outputs() > 1)
    return ctx.error(str_cat(ctx.requested_outputs(), " outputs requested; running mean and ",
                             "variance are training outputs and are not supported"));
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2)
    return ctx.error(
        str_cat("input X has shape ", list_to_string(x), ", expected rank >= 2 (N x C x ...)"));
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < 5; ++i)
    if (absl::Status s = require_channel_vector(ctx, i, names[i - 1], x[1]); !s.ok()) return s;
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status batch_norm_reference(const KernelArgs& args) {
  const auto& a = args.get<BatchNormalizationAttrs>();
  const Tensor& x = args.inputs[0];
  const float* scale = args.inputs[1].data<float>();
  const float* bias = args.inputs[2].data<float>();
  const float* mean = args.inputs[3].data<float>();
  const float* var = args.inputs[4].data<float>();
  const int64_t batch = x.shape()[0], channels = x.shape()[1];
  const int64_t size = batch * channels == 0 ? 0 : x.numel() / (batch * channels);
  const float* in = x.data<float>();
  float* out = args.outputs[0].data<float>();
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const float mul = scale[c] / std::sqrt(var[c] + a.epsilon);
      const float add = bias[c] - mean[c] * mul;
      const int64_t base = (n * channels + c) * size;
      for (int64_t i = 0; i < size; ++i) out[base + i] = in[base + i] * mul + add;
    }
  }
  return absl::OkStatus();
}

// y = (x - mean(x)) / sqrt(var(x) + epsilon) * scale[i] + bias[i] over n contiguous elements;
// statistics are accumulated in double. `t` is the node's type: for f16 and bf16 the normalised
// value, its product with the scale and the sum with the bias are each rounded to it, as
// LayerNormalization's definition (stash_type 1: statistics in float, the normalised value cast
// back to the input's type before Scale and B) rounds them; f32 rounds nothing.
// Normalises one row; `mean_out` and `inv_out` (may be null) receive its mean and 1 / stddev.
void normalize_row(const float* x, int64_t n, float epsilon, const float* scale, const float* bias,
                   DType t, float* y, float* mean_out = nullptr, float* inv_out = nullptr) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(n);
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const float m = static_cast<float>(mean);
  const float inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(n) + epsilon));
  if (mean_out) *mean_out = m;
  if (inv_out) *inv_out = inv;
  for (int64_t i = 0; i < n; ++i) {
    const auto scaled = static_cast<float>(round16(t, round16(t, (x[i] - m) * inv) * scale[i]));
    y[i] = bias ? static_cast<float>(round16(t, scaled + bias[i])) : scaled;
  }
}

absl::Status infer_instance_norm(InferContext& ctx) {
  if (absl::Status s = require_f32(ctx, {"input", "scale", "B"}); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3)
    return ctx.error(str_cat("input has shape ", list_to_string(x),
                             ", expected rank >= 3 (N x C x spatial axes)"));
  if (absl::Status s = require_channel_vector(ctx, 1, "scale", x[1]); !s.ok()) return s;
  if (absl::Status s = require_channel_vector(ctx, 2, "B", x[1]); !s.ok()) return s;
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status instance_norm_reference(const KernelArgs& args) {
  const auto& a = args.get<InstanceNormalizationAttrs>();
  const Tensor& x = args.inputs[0];
  const int64_t batch = x.shape()[0], channels = x.shape()[1];
  const int64_t size = batch * channels == 0 ? 0 : x.numel() / (batch * channels);
  if (size == 0) return absl::OkStatus();
  std::vector<float> scale(size), bias(size);
  for (int64_t c = 0; c < channels; ++c) {
    std::fill(scale.begin(), scale.end(), args.inputs[1].data<float>()[c]);
    std::fill(bias.begin(), bias.end(), args.inputs[2].data<float>()[c]);
    for (int64_t n = 0; n < batch; ++n) {
      const int64_t base = (n * channels + c) * size;
      normalize_row(x.data<float>() + base, size, a.epsilon, scale.data(), bias.data(),
                    DType::f32, args.outputs[0].data<float>() + base);
    }
  }
  return absl::OkStatus();
}

absl::Status infer_layer_norm(InferContext& ctx) {
  const auto& a = ctx.attrs<LayerNormalizationAttrs>();
  const DType t = ctx.input(0).dtype;
  if (t != DType::f32 && t != DType::f16 && t != DType::bf16)
    return ctx.error(str_cat("input X is ", dtype_name(t), "; expected f32, f16 or bf16"));
  for (int i = 1; i < 3; ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != t)
      return ctx.error(str_cat("input ", i == 1 ? "Scale" : "B", " is ",
                               dtype_name(ctx.input(i).dtype), ", X is ", dtype_name(t)));
  if (a.stash_type != 1)
    return ctx.error(str_cat("stash_type ", a.stash_type,
                             " is not supported (1: statistics computed in float)"));
  if (ctx.requested_outputs() > 3)
    return ctx.error(str_cat(ctx.requested_outputs(), " outputs requested; there are 3 (Y, Mean, "
                             "InvStdDev)"));
  const Shape& x = ctx.input(0).shape;
  const auto axis = normalize_axis(a.axis, static_cast<int64_t>(x.size()));
  if (x.empty() || !axis)
    return ctx.error(
        str_cat("axis ", a.axis, " is out of range for X of shape ", list_to_string(x)));
  const Shape norm(x.begin() + *axis, x.end());
  const char* names[] = {"Scale", "B"};
  for (int i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    const Shape& s = ctx.input(i).shape;
    auto b = broadcast_shapes(norm, s);
    if (!b || *b != norm)
      return ctx.error(str_cat("input ", names[i - 1], " has shape ", list_to_string(s),
                               ", which does not broadcast to the normalized shape ",
                               list_to_string(norm), " (axis ", a.axis, ")"));
  }
  ctx.set_output(0, ctx.input(0));
  // Mean and InvStdDev keep the leading axes, with size 1 on the normalised ones.
  Shape stats(x.begin(), x.begin() + *axis);
  stats.resize(x.size(), 1);
  for (int i = 1; i < ctx.requested_outputs(); ++i) ctx.set_output(i, {DType::f32, stats});
  return absl::OkStatus();
}

// The values of `t` (f32, f16 or bf16) broadcast to `shape`, materialised as floats.
std::vector<float> expand_to(const Tensor& t, const Shape& shape) {
  const Tensor f = t.dtype() == DType::f32 ? t : t.cast(DType::f32);
  std::vector<float> out(shape_numel(shape));
  for_each_broadcast(f.shape(), f.shape(), shape,
                     [&](int64_t ia, int64_t, int64_t o) { out[o] = f.data<float>()[ia]; });
  return out;
}

// On f16 and bf16 the rows are widened to float and the results (already rounded to the type by
// normalize_row) stored narrow; Mean and InvStdDev stay float (ONNX's stash type).
absl::Status layer_norm_reference(const KernelArgs& args) {
  const auto& a = args.get<LayerNormalizationAttrs>();
  const Tensor& x = args.inputs[0];
  const DType t = x.dtype();
  const int64_t axis = *normalize_axis(a.axis, x.rank());
  const Shape norm(x.shape().begin() + axis, x.shape().end());
  const int64_t size = shape_numel(norm);
  if (size == 0) return absl::OkStatus();
  const std::vector<float> scale = expand_to(args.inputs[1], norm);
  const bool has_bias = args.inputs.size() > 2 && !args.inputs[2].empty();
  const std::vector<float> bias = has_bias ? expand_to(args.inputs[2], norm) : std::vector<float>();
  const Tensor xf = t == DType::f32 ? x : x.cast(DType::f32);
  Tensor yf = t == DType::f32 ? args.outputs[0] : Tensor(DType::f32, x.shape());
  const int64_t rows = x.numel() / size;
  float* mean = args.outputs.size() > 1 ? args.outputs[1].data<float>() : nullptr;
  float* inv = args.outputs.size() > 2 ? args.outputs[2].data<float>() : nullptr;
  for (int64_t r = 0; r < rows; ++r)
    normalize_row(xf.data<float>() + r * size, size, a.epsilon, scale.data(),
                  has_bias ? bias.data() : nullptr, t, yf.data<float>() + r * size,
                  mean ? mean + r : nullptr, inv ? inv + r : nullptr);
  if (t != DType::f32) {
    const Tensor narrow = yf.cast(t);
    std::copy_n(narrow.data<uint16_t>(), x.numel(), args.outputs[0].data<uint16_t>());
  }
  return absl::OkStatus();
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  // Inference batch normalisation is a per-channel affine map: it fuses like a broadcast op.
  add_builtin(r, make_op<BatchNormalizationAttrs>("BatchNormalization", FusionKind::broadcast, 5, 5,
                                                  infer_batch_norm, batch_norm_reference));
  add_builtin(r,
              make_op<InstanceNormalizationAttrs>("InstanceNormalization", FusionKind::opaque, 3, 3,
                                                  infer_instance_norm, instance_norm_reference));
  add_builtin(r, make_op<LayerNormalizationAttrs>("LayerNormalization", FusionKind::opaque, 2, 3,
                                                  infer_layer_norm, layer_norm_reference));
}

}  // namespace collage::ops
