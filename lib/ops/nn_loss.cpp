// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (float inputs, i32/i64 targets; computed
// in double).
#include <cmath>

#include "collage/ops/loss.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

constexpr TypeSet kTargetTypes = type_bit(DType::i32) | type_bit(DType::i64);

// Inputs: scores [N, C, d...], targets [N, d...], optional weights [C]. Output 0 is the loss;
// `log_prob` adds output 1 of the scores' type (SoftmaxCrossEntropyLoss).
absl::Status infer_loss(InferContext& ctx, bool log_prob) {
  if (absl::Status s = check_output_count(ctx, log_prob ? 2 : 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kFloatTypes); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 1, kTargetTypes); !s.ok()) return s;
  const auto& a = ctx.attrs<LossAttrs>();
  if (a.reduction != "none" && a.reduction != "sum" && a.reduction != "mean")
    return ctx.error(str_cat("reduction '", a.reduction, "' is not none, sum or mean"));
  const Shape& x = ctx.input(0).shape;
  const Shape& t = ctx.input(1).shape;
  Shape want = x;
  if (x.size() >= 2) want.erase(want.begin() + 1);
  if (x.size() < 2 || t != want)
    return ctx.error(str_cat("target has shape ", shape_to_string(t), "; for input ",
                             shape_to_string(x), " it must be ", shape_to_string(want)));
  if (ctx.has_input(2)) {
    if (absl::Status s = check_same_dtype(ctx, 0, 2); !s.ok()) return s;
    if (ctx.input(2).shape != Shape{x[1]})
      return ctx.error(str_cat("weight has shape ", shape_to_string(ctx.input(2).shape),
                               ", expected [", x[1], "]"));
  }
  ctx.set_output(0, {ctx.input(0).dtype, a.reduction == "none" ? t : Shape{}});
  if (log_prob && ctx.requested_outputs() > 1) ctx.set_output(1, ctx.input(0));
  return absl::OkStatus();
}

// The loss of log-probabilities `lp` (N x C x inner, as doubles) against the targets.
absl::Status nll(const std::vector<double>& lp, const Shape& x, const Tensor& target,
                 const Tensor* weight, const LossAttrs& a, Tensor& out) {
  const int64_t n = x[0], c = x[1];
  const int64_t inner = c && n ? static_cast<int64_t>(lp.size()) / (n * c) : 0;
  std::vector<double> loss(static_cast<size_t>(n * inner), 0.0);
  double total = 0, weights = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = target.get_as_int64(b * inner + i);
      if (k == a.ignore_index) continue;
      if (k < 0 || k >= c)
        return absl::InvalidArgumentError(str_cat("target ", k, " (element ", b * inner + i,
                                                  ") is out of range for ", c, " classes"));
      const double w = weight ? weight->get_as_double(k) : 1.0;
      const double l = -lp[(b * c + k) * inner + i] * w;
      loss[b * inner + i] = l;
      total += l;
      weights += w;
    }
  return dispatch_codec<kFloatTypes>(out.dtype(), [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::Compute;
    auto* y = out.data<typename C::Storage>();
    if (a.reduction == "none") {
      for (size_t i = 0; i < loss.size(); ++i) y[i] = C::store(static_cast<T>(loss[i]));
    } else {
      y[0] = C::store(static_cast<T>(a.reduction == "sum" ? total : total / weights));
    }
  });
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get_as_double(i);
  return v;
}

absl::Status nll_kernel(const KernelArgs& args) {
  const Tensor* w = args.inputs.size() > 2 && !args.inputs[2].empty() ? &args.inputs[2] : nullptr;
  return nll(as_doubles(args.inputs[0]), args.inputs[0].shape(), args.inputs[1], w,
             args.get<LossAttrs>(), args.outputs[0]);
}

absl::Status sce_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  std::vector<double> lp = as_doubles(x);
  const int64_t n = x.shape()[0], c = x.shape()[1];
  const int64_t inner = n && c ? x.numel() / (n * c) : 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < c; ++k) m = std::max(m, lp[(b * c + k) * inner + i]);
      for (int64_t k = 0; k < c; ++k) s += std::exp(lp[(b * c + k) * inner + i] - m);
      const double log_s = std::log(s) + m;
      for (int64_t k = 0; k < c; ++k) lp[(b * c + k) * inner + i] -= log_s;
    }
  if (args.outputs.size() > 1) {
    Tensor& out = args.outputs[1];
    if (absl::Status s = dispatch_codec<kFloatTypes>(out.dtype(), [&](auto codec) {
          using C = decltype(codec);
          auto* y = out.data<typename C::Storage>();
          for (size_t i = 0; i < lp.size(); ++i)
            y[i] = C::store(static_cast<typename C::Compute>(lp[i]));
        });
        !s.ok())
      return s;
  }
  const Tensor* w = args.inputs.size() > 2 && !args.inputs[2].empty() ? &args.inputs[2] : nullptr;
  return nll(lp, x.shape(), args.inputs[1], w, args.get<LossAttrs>(), args.outputs[0]);
}

}  // namespace

void register_loss_ops(OpRegistry& r) {
  add_builtin_op(r, make_op<LossAttrs>(
                        "NegativeLogLikelihoodLoss", FusionKind::opaque, 2, 3,
                        [](InferContext& ctx) { return infer_loss(ctx, false); }, nll_kernel));
  add_builtin_op(r, make_op<LossAttrs>(
                        "SoftmaxCrossEntropyLoss", FusionKind::opaque, 2, 3,
                        [](InferContext& ctx) { return infer_loss(ctx, true); }, sce_kernel));
}

}  // namespace collage::ops
