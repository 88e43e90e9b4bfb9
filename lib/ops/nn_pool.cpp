// MaxPool, AveragePool and GlobalAveragePool: shape inference and reference kernels.
#include <algorithm>
#include <limits>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/elementwise_common.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

WindowAttrs window_attrs(const MaxPoolAttrs& a) {
  return {a.auto_pad, a.strides, a.dilations, a.pads, a.ceil_mode != 0};
}
WindowAttrs window_attrs(const AveragePoolAttrs& a) {
  return {a.auto_pad, a.strides, a.dilations, a.pads, a.ceil_mode != 0};
}

// Element types of MaxPool (ONNX 12 on: the 8-bit integers besides the floats).
constexpr TypeSet kMaxPoolTypes = kFloatTypes | type_bit(DType::i8) | type_bit(DType::u8);

// Shared inference of the windowed pools: N x C x D1..Dn in, N x C x O1..On out (and MaxPool's
// Indices, i64 of the same shape).
template <typename A>
absl::Status infer_pool(InferContext& ctx, TypeSet types, int max_outputs) {
  const auto& a = ctx.attrs<A>();
  if (types == type_bit(DType::f32)) {
    if (absl::Status s = require_f32(ctx, {"X"}); !s.ok()) return s;
  } else if (absl::Status s = check_dtype(ctx, 0, types); !s.ok()) {
    return s;
  }
  if (ctx.requested_outputs() > max_outputs)
    return ctx.error(str_cat(ctx.requested_outputs(), " outputs requested; the operator has ",
                             max_outputs));
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3 || x.size() > 5)
    return ctx.error(str_cat("input X has shape ", list_to_string(x), ", expected rank 3 to 5 ",
                             "(N x C x 1-3 spatial axes)"));
  if (a.kernel_shape.size() + 2 != x.size())
    return ctx.error(str_cat("kernel_shape ", list_to_string(a.kernel_shape), " must have ",
                             x.size() - 2, " values, one per spatial axis of X ",
                             list_to_string(x)));
  if (a.ceil_mode != 0 && a.ceil_mode != 1)
    return ctx.error(str_cat("ceil_mode ", a.ceil_mode, " must be 0 or 1"));
  auto win = resolve_window(spatial_dims(x), a.kernel_shape, window_attrs(a));
  if (!win.ok()) return node_error(ctx, win.status());
  for (int64_t i = 0; i < win->rank(); ++i) {
    if (win->pad_begin[i] >= win->kernel[i] || win->pad_end[i] >= win->kernel[i])
      return ctx.error(str_cat("pads ", list_to_string(a.pads), " must be smaller than the kernel ",
                               list_to_string(a.kernel_shape)));
  }
  Shape out = {x[0], x[1]};
  out.insert(out.end(), win->out.begin(), win->out.end());
  ctx.set_output(0, {ctx.input(0).dtype, out});
  if (ctx.requested_outputs() == 2) ctx.set_output(1, {DType::i64, out});
  return absl::OkStatus();
}

absl::Status infer_max_pool(InferContext& ctx) {
  if (int64_t order = ctx.attrs<MaxPoolAttrs>().storage_order; order != 0 && order != 1)
    return ctx.error(str_cat("storage_order ", order, " must be 0 or 1"));
  return infer_pool<MaxPoolAttrs>(ctx, kMaxPoolTypes, 2);
}

absl::Status infer_average_pool(InferContext& ctx) {
  if (int64_t c = ctx.attrs<AveragePoolAttrs>().count_include_pad; c != 0 && c != 1)
    return ctx.error(str_cat("count_include_pad ", c, " must be 0 or 1"));
  return infer_pool<AveragePoolAttrs>(ctx, type_bit(DType::f32), 1);
}

// Runs `pool(plane_in, plane_out, g)` on every N x C plane.
template <typename F>
void for_each_plane(const Tensor& x, Tensor& y, const Window3& g, F&& pool) {
  const int64_t planes = x.shape()[0] * x.shape()[1];
  for (int64_t p = 0; p < planes; ++p)
    pool(x.data<float>() + p * g.in_size(), y.data<float>() + p * g.out_size());
}

// The first maximum of each window, in the element type; Indices (when asked for) is its flat
// index in X, the spatial part row-major (storage_order 0) or column-major (1).
absl::Status max_pool_reference(const KernelArgs& args) {
  const auto& a = args.get<MaxPoolAttrs>();
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  int64_t* indices = args.outputs.size() > 1 ? args.outputs[1].data<int64_t>() : nullptr;
  auto win = resolve_window(spatial_dims(x.shape()), a.kernel_shape, window_attrs(a));
  if (!win.ok()) return win.status();
  const Window3 g = to_3d(*win);
  // Strides of the three (padded to 3-D) spatial axes in the index Indices reports.
  std::array<int64_t, 3> istride = {g.in[1] * g.in[2], g.in[2], 1};
  if (a.storage_order == 1) {
    const int64_t r = win->rank();
    int64_t acc = 1;
    istride = {0, 0, 0};
    for (int64_t j = 0; j < r; ++j) {
      istride[3 - r + j] = acc;
      acc *= g.in[3 - r + j];
    }
  }
  const int64_t planes = x.shape()[0] * x.shape()[1];
  return dispatch_codec<kMaxPoolTypes>(x.dtype(), [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::Compute;
    const auto* xs = x.data<typename C::Storage>();
    auto* ys = y.data<typename C::Storage>();
    for (int64_t p = 0; p < planes; ++p) {
      const auto* in = xs + p * g.in_size();
      int64_t o = p * g.out_size();
      for (int64_t od = 0; od < g.out[0]; ++od) {
        const int64_t sd = od * g.stride[0] - g.pad[0];
        const auto [kd_lo, kd_hi] = valid_range(sd, g.dilation[0], g.in[0], g.kernel[0]);
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          const int64_t sh = oh * g.stride[1] - g.pad[1];
          const auto [kh_lo, kh_hi] = valid_range(sh, g.dilation[1], g.in[1], g.kernel[1]);
          for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
            const int64_t sw = ow * g.stride[2] - g.pad[2];
            const auto [kw_lo, kw_hi] = valid_range(sw, g.dilation[2], g.in[2], g.kernel[2]);
            T m = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                       : std::numeric_limits<T>::lowest();
            int64_t at = -1;
            for (int64_t kd = kd_lo; kd < kd_hi; ++kd)
              for (int64_t kh = kh_lo; kh < kh_hi; ++kh)
                for (int64_t kw = kw_lo; kw < kw_hi; ++kw) {
                  const int64_t d = sd + kd * g.dilation[0], h = sh + kh * g.dilation[1],
                                w = sw + kw * g.dilation[2];
                  const T v = C::load(in[(d * g.in[1] + h) * g.in[2] + w]);
                  if (at < 0 || v > m) {
                    m = v;
                    at = d * istride[0] + h * istride[1] + w * istride[2];
                  }
                }
            ys[o] = C::store(m);
            if (indices) indices[o] = p * g.in_size() + std::max<int64_t>(at, 0);
          }
        }
      }
    }
  });
}

absl::Status average_pool_reference(const KernelArgs& args) {
  const auto& a = args.get<AveragePoolAttrs>();
  const Tensor& x = args.inputs[0];
  auto win = resolve_window(spatial_dims(x.shape()), a.kernel_shape, window_attrs(a));
  if (!win.ok()) return win.status();
  const Window3 g = to_3d(*win);
  // The divisor counts the taps inside the input, or with count_include_pad inside the padded
  // input (not the taps of a ceil_mode window that hang past the end padding).
  std::array<int64_t, 3> pad_end;
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t j = i - (3 - win->rank());
    pad_end[i] = j >= 0 ? win->pad_end[j] : 0;
  }
  auto taps = [&](int64_t i, int64_t start) {
    const auto inside = valid_range(start, g.dilation[i], g.in[i], g.kernel[i]);
    const auto counted =
        a.count_include_pad
            ? valid_range(start + g.pad[i], g.dilation[i], g.in[i] + g.pad[i] + pad_end[i],
                          g.kernel[i])
            : inside;
    return std::array<int64_t, 3>{inside.first, inside.second, counted.second - counted.first};
  };
  for_each_plane(x, args.outputs[0], g, [&](const float* in, float* out) {
    for (int64_t od = 0; od < g.out[0]; ++od) {
      const int64_t sd = od * g.stride[0] - g.pad[0];
      const auto d = taps(0, sd);
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const int64_t sh = oh * g.stride[1] - g.pad[1];
        const auto h = taps(1, sh);
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          const int64_t sw = ow * g.stride[2] - g.pad[2];
          const auto w = taps(2, sw);
          float sum = 0.f;
          for (int64_t kd = d[0]; kd < d[1]; ++kd)
            for (int64_t kh = h[0]; kh < h[1]; ++kh) {
              const float* row =
                  in + ((sd + kd * g.dilation[0]) * g.in[1] + sh + kh * g.dilation[1]) * g.in[2];
              for (int64_t kw = w[0]; kw < w[1]; ++kw) sum += row[sw + kw * g.dilation[2]];
            }
          const int64_t count = std::max<int64_t>(d[2], 0) * std::max<int64_t>(h[2], 0) *
                                std::max<int64_t>(w[2], 0);
          *out++ = count > 0 ? sum / static_cast<float>(count) : 0.f;
        }
      }
    }
  });
  return absl::OkStatus();
}

absl::Status infer_global_average_pool(InferContext& ctx) {
  if (absl::Status s = require_f32(ctx, {"X"}); !s.ok()) return s;
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3)
    return ctx.error(str_cat("input X has shape ", list_to_string(x),
                             ", expected rank >= 3 (N x C x spatial axes)"));
  Shape out(x.size(), 1);
  out[0] = x[0];
  out[1] = x[1];
  ctx.set_output(0, {DType::f32, out});
  return absl::OkStatus();
}

absl::Status global_average_pool_reference(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t size = planes == 0 ? 0 : x.numel() / planes;
  const float* in = x.data<float>();
  float* out = args.outputs[0].data<float>();
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < size; ++i) sum += in[p * size + i];
    out[p] = size > 0 ? static_cast<float>(sum / static_cast<double>(size)) : 0.f;
  }
  return absl::OkStatus();
}

}  // namespace

void register_pool_ops(OpRegistry& r) {
  add_builtin(r, make_op<MaxPoolAttrs>("MaxPool", FusionKind::opaque, 1, 1, infer_max_pool,
                                       max_pool_reference));
  add_builtin(r, make_op<AveragePoolAttrs>("AveragePool", FusionKind::opaque, 1, 1,
                                           infer_average_pool, average_pool_reference));
  add_builtin(r, make_op<NoAttrs>("GlobalAveragePool", FusionKind::opaque, 1, 1,
                                  infer_global_average_pool, global_average_pool_reference));
}

}  // namespace collage::ops
