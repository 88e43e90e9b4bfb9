// Softmax and LogSoftmax over one axis (opset-13 semantics); Softmax also on f16 and bf16, each
// step rounded to the type as ONNX's definition rounds it.
#include <cmath>
#include <limits>
#include <vector>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/nn_ops.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

template <bool kLog>
absl::Status infer_softmax(InferContext& ctx) {
  const DType t = ctx.input(0).dtype;
  if (kLog || (t != DType::f16 && t != DType::bf16))
    if (absl::Status s = require_f32(ctx, {"input"}); !s.ok()) return s;
  const int64_t axis = ctx.attrs<SoftmaxAttrs>().axis;
  const Shape& x = ctx.input(0).shape;
  if (!normalize_axis(axis, static_cast<int64_t>(x.size())))
    return ctx.error(
        str_cat("axis ", axis, " is out of range for input of shape ", list_to_string(x)));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

// Softmax (or its log) along the middle axis of an outer x n x inner tensor. The loops run over
// `inner` innermost so that every pass reads contiguous memory.
// Softmax of f16 or bf16 as ONNX computes it: x - max, exp and the quotient each rounded to the
// type; the sum accumulated in float for f16 and rounded after every add for bf16.
absl::Status softmax_16bit(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  const DType t = x.dtype();
  const Shape& shape = x.shape();
  const int64_t axis = *normalize_axis(args.get<SoftmaxAttrs>().axis, x.rank());
  const int64_t n = shape[axis];
  const int64_t inner = shape_numel(Shape(shape.begin() + axis + 1, shape.end()));
  if (n * inner == 0) return absl::OkStatus();
  const int64_t outer = x.numel() / (n * inner);
  std::vector<double> e(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; ++i) m = std::max(m, x.get_as_double(base + i * inner));
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        e[i] = round16(t, std::exp(round16(t, x.get_as_double(base + i * inner) - m)));
        sum = t == DType::bf16 ? round16(t, sum + e[i]) : sum + e[i];
      }
      sum = round16(t, sum);
      for (int64_t i = 0; i < n; ++i) {
        const auto v = static_cast<float>(round16(t, e[i] / sum));
        y.data<uint16_t>()[base + i * inner] = t == DType::f16 ? float_to_half(v) : float_to_bfloat16(v);
      }
    }
  return absl::OkStatus();
}

template <bool kLog>
absl::Status softmax_reference(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  if (!kLog && (x.dtype() == DType::f16 || x.dtype() == DType::bf16)) return softmax_16bit(args);
  const Shape& shape = x.shape();
  const int64_t axis = *normalize_axis(args.get<SoftmaxAttrs>().axis, x.rank());
  const int64_t n = shape[axis];
  const int64_t inner = shape_numel(Shape(shape.begin() + axis + 1, shape.end()));
  const int64_t block = n * inner;
  if (block == 0) return absl::OkStatus();
  const int64_t outer = x.numel() / block;
  std::vector<float> max(inner), sum(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const float* in = x.data<float>() + o * block;
    float* out = args.outputs[0].data<float>() + o * block;
    std::fill(max.begin(), max.end(), -std::numeric_limits<float>::infinity());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) max[j] = std::max(max[j], in[i * inner + j]);
    std::fill(sum.begin(), sum.end(), 0.f);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const float e = std::exp(in[i * inner + j] - max[j]);
        if (!kLog) out[i * inner + j] = e;
        sum[j] += e;
      }
    if constexpr (kLog) {
      for (int64_t j = 0; j < inner; ++j) max[j] += std::log(sum[j]);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) out[i * inner + j] = in[i * inner + j] - max[j];
    } else {
      for (int64_t j = 0; j < inner; ++j) sum[j] = 1.f / sum[j];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) out[i * inner + j] *= sum[j];
    }
  }
  return absl::OkStatus();
}

}  // namespace

void register_softmax_ops(OpRegistry& r) {
  add_builtin(r, make_op<SoftmaxAttrs>("Softmax", FusionKind::opaque, 1, 1, infer_softmax<false>,
                                       softmax_reference<false>));
  add_builtin(r, make_op<SoftmaxAttrs>("LogSoftmax", FusionKind::opaque, 1, 1,
                                       infer_softmax<true>, softmax_reference<true>));
}

}  // namespace collage::ops
