// BatchNormalizationTraining: ONNX BatchNormalization (version 14 on) with training_mode = 1,
// which normalises with the batch's own statistics and also gives the updated running mean and
// variance. An operator of its own, separate from the inference BatchNormalization, so that no
// fast backend or pass that folds the inference form ever meets it; the reference runs it.
#include <cmath>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/nn_ops.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

absl::Status infer_batch_norm_training(InferContext& ctx) {
  if (absl::Status s = require_f32(ctx, {"X", "scale", "B", "input_mean", "input_var"}); !s.ok())
    return s;
  if (ctx.requested_outputs() > 3)
    return ctx.error(str_cat(ctx.requested_outputs(), " outputs requested; the operator has 3 ",
                             "(Y, running_mean, running_var)"));
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2)
    return ctx.error(
        str_cat("input X has shape ", list_to_string(x), ", expected rank >= 2 (N x C x ...)"));
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < 5; ++i)
    if (ctx.input(i).shape != Shape{x[1]})
      return ctx.error(str_cat("input ", names[i - 1], " has shape ",
                               list_to_string(ctx.input(i).shape), ", expected [", x[1],
                               "] (the channels of X ", list_to_string(x), ")"));
  ctx.set_output(0, ctx.input(0));
  for (int i = 1; i < ctx.requested_outputs(); ++i) ctx.set_output(i, {DType::f32, {x[1]}});
  return absl::OkStatus();
}

// Per channel: the mean and the population variance (accumulated in double) over N and the
// spatial axes; Y normalised with them; running = input * momentum + batch * (1 - momentum).
absl::Status batch_norm_training_reference(const KernelArgs& args) {
  const auto& a = args.get<BatchNormalizationAttrs>();
  const Tensor& x = args.inputs[0];
  const int64_t batch = x.shape()[0], channels = x.shape()[1];
  const int64_t size = batch * channels == 0 ? 0 : x.numel() / (batch * channels);
  const float* in = x.data<float>();
  float* out = args.outputs[0].data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t i = 0; i < size; ++i) sum += in[(n * channels + c) * size + i];
    const double count = static_cast<double>(batch * size);
    const double mean = count > 0 ? sum / count : 0.0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t i = 0; i < size; ++i) {
        const double d = in[(n * channels + c) * size + i] - mean;
        sq += d * d;
      }
    const double var = count > 0 ? sq / count : 0.0;
    const double mul = args.inputs[1].data<float>()[c] / std::sqrt(var + a.epsilon);
    const double add = args.inputs[2].data<float>()[c] - mean * mul;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t i = 0; i < size; ++i) {
        const int64_t at = (n * channels + c) * size + i;
        out[at] = static_cast<float>(in[at] * mul + add);
      }
    const double m = a.momentum;
    if (args.outputs.size() > 1)
      args.outputs[1].data<float>()[c] =
          static_cast<float>(args.inputs[3].data<float>()[c] * m + mean * (1 - m));
    if (args.outputs.size() > 2)
      args.outputs[2].data<float>()[c] =
          static_cast<float>(args.inputs[4].data<float>()[c] * m + var * (1 - m));
  }
  return absl::OkStatus();
}

}  // namespace

void register_batch_norm_training_op(OpRegistry& r) {
  add_builtin(r, make_op<BatchNormalizationAttrs>("BatchNormalizationTraining",
                                                  FusionKind::opaque, 5, 5,
                                                  infer_batch_norm_training,
                                                  batch_norm_training_reference));
}

}  // namespace collage::ops
