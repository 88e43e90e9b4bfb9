// BlackmanWindow, HammingWindow, HannWindow and MelWeightMatrix (ONNX 17): tensors generated from
// scalar inputs. The output shape follows the input values, so it is exact when they are
// compile-time constants and dynamic otherwise; the reference executor then infers it again from
// the actual values (as it does for NonZero).
#include <cassert>
#include <cmath>
#include <numbers>

#include "collage/ops/signal.h"
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

// w[n] = sum_k c_k cos(2 pi k n / N), with N the size (periodic) or size - 1 (symmetric).
template <int kTerms>
KernelFn cosine_window(std::array<double, kTerms> c) {
  return [c](const KernelArgs& k) {
    Tensor& y = k.outputs[0];
    const int64_t size = y.numel();
    const auto denom = static_cast<double>(k.get<SignalWindowAttrs>().periodic ? size : size - 1);
    std::vector<double> w(static_cast<size_t>(size));
    for (int64_t n = 0; n < size; ++n) {
      double v = 0;
      for (int t = 0; t < kTerms; ++t)
        v += c[t] * std::cos(2 * std::numbers::pi * t * static_cast<double>(n) / denom);
      w[n] = v;
    }
    return store(w, y);
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

// ONNX's definition: num_mel_bins + 2 edges spaced by (high - low) / (num_mel_bins + 2) mels,
// each mapped to the spectrogram bin floor((dft_length + 1) * hertz / sample_rate); filter i
// rises from edge i to edge i + 1 and falls to edge i + 2.
absl::Status run_mel(const KernelArgs& k) {
  Tensor& y = k.outputs[0];
  const int64_t spectrum = y.shape()[0], bins = y.shape()[1];
  const int64_t dft = k.inputs[1].get_as_int64(0), rate = k.inputs[2].get_as_int64(0);
  if (rate <= 0) return absl::InvalidArgumentError(str_cat("sample_rate is ", rate));
  const double lo = k.inputs[3].get_as_double(0), hi = k.inputs[4].get_as_double(0);
  auto to_mel = [](double hz) { return 2595 * std::log1p(hz / 700) / std::log(10.0); };
  const double low_mel = to_mel(lo);
  const double step = (to_mel(hi) - low_mel) / static_cast<double>(bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    const double hz = 700 * std::expm1((static_cast<double>(i) * step + low_mel) / 2595 *
                                       std::log(10.0));
    const double b = std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate));
    if (!(b >= 0 && b < static_cast<double>(spectrum)))
      return absl::InvalidArgumentError(
          str_cat("mel edge ", i, " falls on spectrogram bin ", b, ", outside [0, ", spectrum,
                  "); the hertz bounds must lie within [0, sample_rate / 2]"));
    edge[i] = static_cast<int64_t>(b);
  }
  std::vector<double> w(static_cast<size_t>(spectrum * bins), 0.0);
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left) {
      w[center * bins + i] = 1;
    } else {
      for (int64_t j = left; j <= center; ++j)
        w[j * bins + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      w[j * bins + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
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
                                    cosine_window<2>({0.5, -0.5})));
  add(r, make_op<SignalWindowAttrs>("HammingWindow", FusionKind::opaque, 1, 1, infer_window,
                                    cosine_window<2>({25.0 / 46.0, -21.0 / 46.0})));
  add(r, make_op<SignalWindowAttrs>("BlackmanWindow", FusionKind::opaque, 1, 1, infer_window,
                                    cosine_window<3>({0.42, -0.5, 0.08})));
  add(r, make_op<MelWeightMatrixAttrs>("MelWeightMatrix", FusionKind::opaque, 5, 5, infer_mel,
                                       run_mel));
}

}  // namespace collage::ops
