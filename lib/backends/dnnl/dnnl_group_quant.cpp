// The dnnl backend's integer contractions: checks of ConvInteger, QLinearConv, MatMulInteger and
// QLinearMatMul, and the compile-time conversions oneDNN needs (weights less their zero point as
// i8, output scales).
#include <cmath>
#include <limits>

#include "backends/dnnl/dnnl_group.h"
#include "collage/ops/nn.h"
#include "core/str_cat.h"

namespace collage::dnnl_backend {
namespace {

bool is_conv(const Node& n) {
  return n.op_name() == "ConvInteger" || n.op_name() == "QLinearConv";
}
bool is_qlinear(const Node& n) {
  return n.op_name() == "QLinearConv" || n.op_name() == "QLinearMatMul";
}

bool present(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] != kNoValue;
}

// Input `i` as a constant of `numel` values (1 or `per`) and type `dtype`; null when absent.
absl::StatusOr<const Tensor*> constant_input(const Graph& g, const Node& n, size_t i,
                                             std::string_view name, DType dtype, int64_t per) {
  if (!present(n, i)) return nullptr;
  const Tensor* t = g.constant_of(n.inputs[i]);
  if (!t) return unsupported(n, str_cat(name, " is not a constant"));
  if (t->dtype() != dtype)
    return unsupported(n, str_cat(name, " is ", dtype_name(t->dtype()), ", expected ",
                                  dtype_name(dtype)));
  if (t->numel() != 1 && t->numel() != per)
    return unsupported(n, str_cat(name, " has ", t->numel(), " values, expected 1",
                                  per > 1 ? str_cat(" or ", per) : std::string()));
  return t;
}

int64_t value_at(const Tensor* t, int64_t i) {
  return t ? t->get_as_int64(t->numel() == 1 ? 0 : i) : 0;
}

}  // namespace

QuantInputs quant_inputs(const Node& n) {
  if (is_qlinear(n)) return {0, 3, n.op_name() == "QLinearConv" ? size_t{8} : SIZE_MAX};
  return {0, 1, SIZE_MAX};
}

absl::StatusOr<QuantPlan> plan_quant(const Graph& g, const Node& n) {
  const bool conv = is_conv(n), qlinear = is_qlinear(n);
  const QuantInputs at = quant_inputs(n);
  if (n.outputs.size() != 1) return unsupported(n, "more than one output");
  const TensorType& x = g.value(n.inputs[at.x]).type;
  const TensorType& y = g.value(n.outputs[0]).type;
  if (x.dtype != DType::u8 && x.dtype != DType::i8)
    return unsupported(n, str_cat("input is ", dtype_name(x.dtype), "; dnnl runs u8 and i8"));
  if (x.numel() == 0 || y.numel() == 0) return unsupported(n, "an empty input or output");
  if (y.shape.size() > rt_dnnl::kMaxRank) return unsupported(n, "rank above 12");
  if (!present(n, at.w)) return unsupported(n, "no weights");
  const Tensor* w = g.constant_of(n.inputs[at.w]);
  if (!w) return unsupported(n, "weights are not a constant");
  const Shape& ws = w->shape();
  if (conv) {
    if (x.shape.size() < 3 || x.shape.size() > 5) return unsupported(n, "input rank must be 3 to 5");
    auto geo = window_geometry(g, n);
    if (!geo.ok()) return geo.status();
  } else if (x.shape.size() < 2 || ws.size() != 2) {
    return unsupported(n, "dnnl runs a matrix (or batch of matrices) times constant 2-D weights");
  }
  // Output channels: conv weights are M x C/G x k..., matmul weights K x N.
  const int64_t channels = conv ? ws[0] : ws[1];
  const size_t xz_i = 2, wz_i = qlinear ? 5 : 3;
  auto xz = constant_input(g, n, xz_i, "the input's zero point", x.dtype, 1);
  if (!xz.ok()) return xz.status();
  auto wz = constant_input(g, n, wz_i, "the weights' zero point", w->dtype(), channels);
  if (!wz.ok()) return wz.status();

  QuantPlan plan;
  plan.params.src_zero_point = static_cast<int32_t>(value_at(*xz, 0));
  plan.weights = Tensor(DType::i8, ws);
  int8_t* out = plan.weights.data<int8_t>();
  const int64_t per_channel = conv ? w->numel() / std::max<int64_t>(channels, 1) : 1;
  // The weights less their zero point, or (matmul, one zero point) less 128 for u8 weights with
  // the rest of the zero point left to oneDNN's weights zero point.
  int64_t shift = 0;
  for (int pass = 0; pass < 2; ++pass) {
    int64_t bad = -1, bad_value = 0;
    for (int64_t i = 0; i < w->numel() && bad < 0; ++i) {
      const int64_t c = conv ? i / per_channel : i % channels;
      const int64_t v = w->get_as_int64(i) - (pass == 0 ? value_at(*wz, c) : shift);
      if (v < -128 || v > 127) bad = i, bad_value = v;
      out[i] = static_cast<int8_t>(v);
    }
    if (bad < 0) {
      if (pass == 1)
        plan.params.weights_zero_point = static_cast<int32_t>(value_at(*wz, 0) - shift);
      break;
    }
    if (pass == 1 || conv || (*wz && (*wz)->numel() != 1))
      return unsupported(n, str_cat("weight ", bad, " less its zero point is ", bad_value,
                                    ", outside i8 (oneDNN's int8 weights)"));
    shift = w->dtype() == DType::u8 ? 128 : 0;
  }
  if (!qlinear) {
    if (y.dtype != DType::i32) return unsupported(n, "output is not i32");
    return plan;
  }
  // QLinear*: (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point[, B]).
  auto xs = constant_input(g, n, 1, "x_scale", DType::f32, 1);
  if (!xs.ok()) return xs.status();
  auto wsc = constant_input(g, n, 4, "w_scale", DType::f32, channels);
  if (!wsc.ok()) return wsc.status();
  auto ys = constant_input(g, n, 6, "y_scale", DType::f32, 1);
  if (!ys.ok()) return ys.status();
  auto yz = constant_input(g, n, 7, "y_zero_point", y.dtype, 1);
  if (!yz.ok()) return yz.status();
  if (!*xs || !*wsc || !*ys) return unsupported(n, "a scale is missing");
  plan.params.dst_zero_point = static_cast<int32_t>(value_at(*yz, 0));
  if (at.bias != SIZE_MAX && present(n, at.bias)) {
    const Tensor* b = g.constant_of(n.inputs[at.bias]);
    if (!b) return unsupported(n, "bias is not a constant");
    if (b->dtype() != DType::i32 || b->numel() != channels)
      return unsupported(n, "bias must be i32 with one value per output channel");
  }
  const float x_scale = (*xs)->data<float>()[0], y_scale = (*ys)->data<float>()[0];
  const int64_t n_scales = (*wsc)->numel();
  for (int64_t c = 0; c < n_scales; ++c) {
    // As the reference kernels compute it: x_scale * w_scale / y_scale, in f32.
    const float m = x_scale * (*wsc)->data<float>()[c] / y_scale;
    if (!std::isfinite(m)) return unsupported(n, "the scales' ratio is not finite");
    plan.params.scales.push_back(m);
  }
  return plan;
}

}  // namespace collage::dnnl_backend
