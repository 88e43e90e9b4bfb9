// BlackmanWindow, HammingWindow, HannWindow and MelWeightMatrix (ONNX 17): tensors generated from
// scalar inputs. The output shape follows the input values, so it is exact when they are
// compile-time constants and dynamic otherwise; the reference executor then infers it again from
// the actual values (as it does for NonZero). The values come from runtime/algorithms/dyn_signal.h,
// which the dynamic runtime module runs too.
#include <cassert>
#include <cmath>

#include "collage/ops/signal.h"
#include "dyn_signal.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

// Beyond this a generated dimension is taken for a bad input, not a request for memory.
constexpr int64_t kMaxGenerated = int64_t{1} << 31;

absl::StatusOr<DType> output_dtype(const InferContext& ctx, const std::string& name) {
  const auto t = parse_dtype(name);
  if (!t || !in_set(kNumericTypes, *t))
    return ctx.error(str_cat("output type '", name, "' is not a numeric type"));
  return *t;
}

// Input i must be a single integer; returns its value when it is a compile-time constant.
absl::StatusOr<std::optional<int64_t>> scalar_int(const InferContext& ctx, int i,
                                                  std::string_view role) {
  if (!in_set(kIntTypes, ctx.input(i).dtype) || ctx.input(i).shape.size() > 1 ||
      ctx.input(i).numel() != 1)
    return ctx.error(str_cat(role, " must be a single integer, got ",
                             type_to_string(ctx.input(i))));
  const Tensor* c = ctx.constant(i);
  if (!c) return std::optional<int64_t>();
  return std::optional<int64_t>(c->get_as_int64(0));
}

absl::Status check_length(const InferContext& ctx, std::string_view role, int64_t v,
                          int64_t min) {
  if (v < min || v > kMaxGenerated)
    return ctx.error(str_cat(role, " is ", v, "; it must lie in [", min, ", ", kMaxGenerated,
                             "]"));
  return absl::OkStatus();
}

// Stores `values` (computed in double) as y's element type, truncating as a cast does.
absl::Status store(const std::vector<double>& values, Tensor& y) {
  return dispatch_codec<kNumericTypes>(y.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* out = y.data<typename C::Storage>();
    for (size_t i = 0; i < values.size(); ++i)
      out[i] = C::store(static_cast<typename C::Compute>(values[i]));
  });
}

// ---- Windows -----------------------------------------------------------------------------------

absl::Status infer_window(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  const auto& a = ctx.attrs<SignalWindowAttrs>();
  if (a.periodic != 0 && a.periodic != 1)
    return ctx.error(str_cat("periodic ", a.periodic, " must be 0 or 1"));
  auto dtype = output_dtype(ctx, a.dtype);
  if (!dtype.ok()) return dtype.status();
  auto size = scalar_int(ctx, 0, "size");
  if (!size.ok()) return size.status();
  if (*size)
    if (absl::Status s = check_length(ctx, "size", **size, 0); !s.ok()) return s;
  ctx.set_output(0, {*dtype, {size->value_or(kDynamicDim)}});
  return absl::OkStatus();
}

KernelFn cosine_window(rt_dynamic::WindowKind kind) {
  return [kind](const KernelArgs& k) {
    Tensor& y = k.outputs[0];
    return store(rt_dynamic::cosine_window(kind, y.numel(),
                                           k.get<SignalWindowAttrs>().periodic != 0),
                 y);
  };
}

// ---- MelWeightMatrix ---------------------------------------------------------------------------

absl::Status infer_mel(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  auto dtype = output_dtype(ctx, ctx.attrs<MelWeightMatrixAttrs>().dtype);
  if (!dtype.ok()) return dtype.status();
  auto bins = scalar_int(ctx, 0, "num_mel_bins");
  if (!bins.ok()) return bins.status();
  auto dft = scalar_int(ctx, 1, "dft_length");
  if (!dft.ok()) return dft.status();
  if (auto rate = scalar_int(ctx, 2, "sample_rate"); !rate.ok()) return rate.status();
  for (int i = 3; i < 5; ++i) {
    const TensorType& t = ctx.input(i);
    if (!in_set(kFloatTypes, t.dtype) || t.shape.size() > 1 || t.numel() != 1)
      return ctx.error(str_cat(i == 3 ? "lower_edge_hertz" : "upper_edge_hertz",
                               " must be a single float, got ", type_to_string(t)));
  }
  if (*bins)
    if (absl::Status s = check_length(ctx, "num_mel_bins", **bins, 1); !s.ok()) return s;
  if (*dft)
    if (absl::Status s = check_length(ctx, "dft_length", **dft, 1); !s.ok()) return s;
  ctx.set_output(0, {*dtype, {*dft ? **dft / 2 + 1 : kDynamicDim, bins->value_or(kDynamicDim)}});
  return absl::OkStatus();
}

absl::Status run_mel(const KernelArgs& k) {
  Tensor& y = k.outputs[0];
  std::vector<double> w;
  const std::string e = rt_dynamic::mel_weight_matrix(
      y.shape()[1], k.inputs[1].get_as_int64(0), k.inputs[2].get_as_int64(0),
      k.inputs[3].get_as_double(0), k.inputs[4].get_as_double(0), w);
  if (!e.empty()) return absl::InvalidArgumentError(e);
  return store(w, y);
}

void add(OpRegistry& r, OpDef d) {
  d.dynamic_shapes = true;
  [[maybe_unused]] absl::Status s = r.add(std::move(d));
  assert(s.ok());
}

}  // namespace

void register_signal_ops(OpRegistry& r) {
  add(r, make_op<SignalWindowAttrs>("HannWindow", FusionKind::opaque, 1, 1, infer_window,
                                    cosine_window(rt_dynamic::WindowKind::hann)));
  add(r, make_op<SignalWindowAttrs>("HammingWindow", FusionKind::opaque, 1, 1, infer_window,
                                    cosine_window(rt_dynamic::WindowKind::hamming)));
  add(r, make_op<SignalWindowAttrs>("BlackmanWindow", FusionKind::opaque, 1, 1, infer_window,
                                    cosine_window(rt_dynamic::WindowKind::blackman)));
  add(r, make_op<MelWeightMatrixAttrs>("MelWeightMatrix", FusionKind::opaque, 5, 5, infer_mel,
                                       run_mel));
}

}  // namespace collage::ops
