// Normalisations added for ONNX coverage: Hardmax, LpNormalization, RMSNormalization,
// MeanVarianceNormalization, GroupNormalization, LRN, GlobalMaxPool and Det, on float dtypes
// (computed in double).
#include <cmath>
#include <limits>

#include "collage/ops/nn.h"
#include "collage/ops/normalization.h"
#include "ops/elementwise_common.h"
#include "ops/nn_ops.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

// The input as [outer, len, inner] around one axis.
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisView view_around(const Shape& s, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
    (d < axis ? v.outer : d == axis ? v.len : v.inner) *= s[d];
  return v;
}

// One float input (plus `extra` more of its dtype), one output of its type; `axis` in range.
absl::Status infer_float_axis(InferContext& ctx, int64_t axis, bool scalar_ok = false) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kFloatTypes); !s.ok()) return s;
  const auto rank = static_cast<int64_t>(ctx.input(0).shape.size());
  if (!(scalar_ok && rank == 0) && !normalize_axis(axis, rank))
    return ctx.error(str_cat("axis ", axis, " is out of range for rank ", rank));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

// Calls f(load, store) with element accessors in double for X's float dtype.
template <typename F>
absl::Status with_doubles(const Tensor& x, Tensor& y, F&& f) {
  return dispatch_codec<kFloatTypes>(x.dtype(), [&](auto codec) {
    using C = decltype(codec);
    const auto* in = x.data<typename C::Storage>();
    auto* out = y.data<typename C::Storage>();
    f([in](int64_t i) { return static_cast<double>(C::load(in[i])); },
      [out](int64_t i, double v) { out[i] = C::store(static_cast<typename C::Compute>(v)); });
  });
}

absl::Status hardmax_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const int64_t axis = *normalize_axis(args.get<SoftmaxAttrs>().axis, x.rank());
  const AxisView v = view_around(x.shape(), axis);
  return with_doubles(x, args.outputs[0], [&](auto load, auto store) {
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.len * v.inner + i;
        int64_t best = 0;
        for (int64_t j = 1; j < v.len; ++j)
          if (load(base + j * v.inner) > load(base + best * v.inner)) best = j;
        for (int64_t j = 0; j < v.len; ++j) store(base + j * v.inner, j == best ? 1.0 : 0.0);
      }
  });
}

absl::Status lp_norm_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const auto& a = args.get<LpNormalizationAttrs>();
  const int64_t axis = *normalize_axis(a.axis, x.rank());
  const AxisView v = view_around(x.shape(), axis);
  return with_doubles(x, args.outputs[0], [&](auto load, auto store) {
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.len * v.inner + i;
        double norm = 0;
        for (int64_t j = 0; j < v.len; ++j) {
          const double e = load(base + j * v.inner);
          norm += a.p == 1 ? std::fabs(e) : e * e;
        }
        if (a.p == 2) norm = std::sqrt(norm);
        for (int64_t j = 0; j < v.len; ++j)
          store(base + j * v.inner, norm == 0 ? 0.0 : load(base + j * v.inner) / norm);
      }
  });
}

absl::Status infer_lp_norm(InferContext& ctx) {
  const auto& a = ctx.attrs<LpNormalizationAttrs>();
  if (a.p != 1 && a.p != 2) return ctx.error(str_cat("p is ", a.p, ", expected 1 or 2"));
  return infer_float_axis(ctx, a.axis);
}

absl::Status infer_rms_norm(InferContext& ctx) {
  if (absl::Status s = infer_float_axis(ctx, ctx.attrs<RMSNormalizationAttrs>().axis); !s.ok())
    return s;
  if (absl::Status s = check_same_dtype(ctx, 0, 1); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  const int64_t axis = *normalize_axis(ctx.attrs<RMSNormalizationAttrs>().axis,
                                       static_cast<int64_t>(x.size()));
  const Shape norm(x.begin() + axis, x.end());
  auto b = broadcast_shapes(norm, ctx.input(1).shape);
  if (!b || *b != norm)
    return ctx.error(str_cat("scale has shape ", shape_to_string(ctx.input(1).shape),
                             ", which does not broadcast to ", shape_to_string(norm)));
  return absl::OkStatus();
}

absl::Status rms_norm_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& scale = args.inputs[1];
  const auto& a = args.get<RMSNormalizationAttrs>();
  const int64_t axis = *normalize_axis(a.axis, x.rank());
  const Shape norm(x.shape().begin() + axis, x.shape().end());
  const int64_t size = shape_numel(norm);
  if (size == 0) return absl::OkStatus();
  std::vector<double> s(static_cast<size_t>(size));
  for_each_broadcast(scale.shape(), scale.shape(), norm,
                     [&](int64_t ia, int64_t, int64_t o) { s[o] = scale.get_as_double(ia); });
  return with_doubles(x, args.outputs[0], [&](auto load, auto store) {
    for (int64_t r = 0; r < x.numel() / size; ++r) {
      double sq = 0;
      for (int64_t i = 0; i < size; ++i) sq += load(r * size + i) * load(r * size + i);
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(size) + a.epsilon);
      for (int64_t i = 0; i < size; ++i)
        store(r * size + i, round16(x.dtype(), load(r * size + i) * inv) * s[i]);
    }
  });
}

absl::Status infer_mvn(InferContext& ctx) {
  if (absl::Status s = infer_float_axis(ctx, 0, true); !s.ok()) return s;
  const auto rank = static_cast<int64_t>(ctx.input(0).shape.size());
  for (int64_t a : ctx.attrs<MeanVarianceNormalizationAttrs>().axes)
    if (!normalize_axis(a, rank))
      return ctx.error(str_cat("axis ", a, " is out of range for rank ", rank));
  return absl::OkStatus();
}

absl::Status mvn_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Shape& shape = x.shape();
  Shape kept = shape;
  for (int64_t a : args.get<MeanVarianceNormalizationAttrs>().axes)
    kept[*normalize_axis(a, x.rank())] = 1;
  const int64_t groups = shape_numel(kept);
  const int64_t count = groups ? x.numel() / groups : 0;
  // Group of each element: its index with the normalised axes dropped.
  std::vector<int64_t> group(static_cast<size_t>(x.numel()));
  for_each_broadcast(kept, kept, shape, [&](int64_t g, int64_t, int64_t o) { group[o] = g; });
  return with_doubles(x, args.outputs[0], [&](auto load, auto store) {
    std::vector<double> mean(groups, 0.0), var(groups, 0.0);
    for (int64_t i = 0; i < x.numel(); ++i) mean[group[i]] += load(i);
    for (double& m : mean) m /= static_cast<double>(count);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double d = load(i) - mean[group[i]];
      var[group[i]] += d * d;
    }
    for (int64_t i = 0; i < x.numel(); ++i)
      store(i, (load(i) - mean[group[i]]) /
                   (std::sqrt(var[group[i]] / static_cast<double>(count)) + 1e-9));
  });
}

absl::Status infer_group_norm(InferContext& ctx) {
  if (absl::Status s = infer_float_axis(ctx, 1); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  const int64_t g = ctx.attrs<GroupNormalizationAttrs>().num_groups;
  if (x.size() < 2 || g < 1 || x[1] % g)
    return ctx.error(str_cat("num_groups ", g, " does not divide the channels of ",
                             shape_to_string(x)));
  for (int i : {1, 2})
    if (ctx.input(i).shape != Shape{x[1]})
      return ctx.error(str_cat(i == 1 ? "scale" : "bias", " must have shape [", x[1], "]"));
  return absl::OkStatus();
}

absl::Status group_norm_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const auto& a = args.get<GroupNormalizationAttrs>();
  const int64_t n = x.shape()[0], c = x.shape()[1], g = a.num_groups;
  const int64_t spatial = n * c != 0 ? x.numel() / (n * c) : 0, size = c / g * spatial;
  const DType t = x.dtype();
  return with_doubles(x, args.outputs[0], [&](auto load, auto store) {
    for (int64_t grp = 0; grp < n * g; ++grp) {
      const int64_t base = grp * size;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < size; ++i) mean += load(base + i);
      mean /= static_cast<double>(size);
      for (int64_t i = 0; i < size; ++i) var += (load(base + i) - mean) * (load(base + i) - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(size) + a.epsilon);
      for (int64_t i = 0; i < size; ++i) {
        const int64_t ch = (grp % g) * (c / g) + i / spatial;
        const double scaled =
            round16(t, round16(t, (load(base + i) - mean) * inv) * args.inputs[1].get_as_double(ch));
        store(base + i, scaled + args.inputs[2].get_as_double(ch));
      }
    }
  });
}

absl::Status infer_det(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kFloatTypes); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    return ctx.error(str_cat("input has shape ", shape_to_string(x), "; expected [..., M, M]"));
  ctx.set_output(0, {ctx.input(0).dtype, Shape(x.begin(), x.end() - 2)});
  return absl::OkStatus();
}

// Determinants by Gaussian elimination with partial pivoting.
absl::Status det_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const int64_t m = x.shape().back(), count = m ? x.numel() / (m * m) : 0;
  std::vector<double> out(static_cast<size_t>(args.outputs[0].numel()), 1.0), a(m * m);
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t i = 0; i < m * m; ++i) a[i] = x.get_as_double(k * m * m + i);
    double det = 1;
    for (int64_t col = 0; col < m; ++col) {
      int64_t piv = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::fabs(a[r * m + col]) > std::fabs(a[piv * m + col])) piv = r;
      if (a[piv * m + col] == 0) {
        det = 0;
        break;
      }
      if (piv != col) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[col * m + j], a[piv * m + j]);
        det = -det;
      }
      det *= a[col * m + col];
      for (int64_t r = col + 1; r < m; ++r) {
        const double f = a[r * m + col] / a[col * m + col];
        for (int64_t j = col; j < m; ++j) a[r * m + j] -= f * a[col * m + j];
      }
    }
    out[k] = det;
  }
  return dispatch_codec<kFloatTypes>(args.outputs[0].dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* y = args.outputs[0].data<typename C::Storage>();
    for (size_t i = 0; i < out.size(); ++i) y[i] = C::store(static_cast<typename C::Compute>(out[i]));
  });
}

absl::Status infer_lrn(InferContext& ctx) {
  if (ctx.attrs<LRNAttrs>().size < 1) return ctx.error("size must be at least 1");
  if (ctx.input(0).shape.size() < 2) return ctx.error("input must be N x C x ...");
  return infer_float_axis(ctx, 1);
}

absl::Status lrn_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const auto& a = args.get<LRNAttrs>();
  const AxisView v = view_around(x.shape(), 1);
  const int64_t lo = (a.size - 1) / 2, hi = (a.size - 1) - lo;  // floor below, ceil above
  return with_doubles(x, args.outputs[0], [&](auto load, auto store) {
    for (int64_t n = 0; n < v.outer; ++n)
      for (int64_t c = 0; c < v.len; ++c)
        for (int64_t i = 0; i < v.inner; ++i) {
          double sq = 0;
          for (int64_t k = std::max<int64_t>(0, c - lo); k <= std::min(v.len - 1, c + hi); ++k) {
            const double e = load((n * v.len + k) * v.inner + i);
            sq += e * e;
          }
          const int64_t at = (n * v.len + c) * v.inner + i;
          store(at, load(at) / std::pow(a.bias + a.alpha / static_cast<double>(a.size) * sq, a.beta));
        }
  });
}

absl::Status infer_global_max_pool(InferContext& ctx) {
  if (absl::Status s = infer_float_axis(ctx, 1); !s.ok()) return s;
  Shape out = ctx.input(0).shape;
  if (out.size() < 3) return ctx.error("input must be N x C x spatial axes");
  for (size_t d = 2; d < out.size(); ++d) out[d] = 1;
  ctx.set_output(0, {ctx.input(0).dtype, out});
  return absl::OkStatus();
}

absl::Status global_max_pool_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t size = planes ? x.numel() / planes : 0;
  return with_doubles(x, args.outputs[0], [&](auto load, auto store) {
    for (int64_t p = 0; p < planes; ++p) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < size; ++i) m = std::max(m, load(p * size + i));
      store(p, m);
    }
  });
}

}  // namespace

void register_norm_extra_ops(OpRegistry& r) {
  add_builtin_op(r, make_op<SoftmaxAttrs>(
                        "Hardmax", FusionKind::opaque, 1, 1,
                        [](InferContext& ctx) {
                          return infer_float_axis(ctx, ctx.attrs<SoftmaxAttrs>().axis);
                        },
                        hardmax_kernel));
  add_builtin_op(r, make_op<LpNormalizationAttrs>("LpNormalization", FusionKind::opaque, 1, 1,
                                                  infer_lp_norm, lp_norm_kernel));
  add_builtin_op(r, make_op<RMSNormalizationAttrs>("RMSNormalization", FusionKind::opaque, 2, 2,
                                                   infer_rms_norm, rms_norm_kernel));
  add_builtin_op(r, make_op<MeanVarianceNormalizationAttrs>("MeanVarianceNormalization",
                                                            FusionKind::opaque, 1, 1, infer_mvn,
                                                            mvn_kernel));
  add_builtin_op(r, make_op<LRNAttrs>("LRN", FusionKind::opaque, 1, 1, infer_lrn, lrn_kernel));
  add_builtin_op(r, make_op<GroupNormalizationAttrs>("GroupNormalization", FusionKind::opaque, 3,
                                                     3, infer_group_norm, group_norm_kernel));
  add_builtin_op(r, make_op<NoAttrs>("Det", FusionKind::opaque, 1, 1, infer_det, det_kernel));
  add_builtin_op(r, make_op<NoAttrs>("GlobalMaxPool", FusionKind::reduction, 1, 1,
                                     infer_global_max_pool, global_max_pool_kernel));
}

}  // namespace collage::ops
