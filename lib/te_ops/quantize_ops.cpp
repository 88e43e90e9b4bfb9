// TE computes of QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (lib/ops/quantize.cpp
// defines them): f32 values, 8- and 16-bit integers, scales per tensor or per index of `axis`
// (blocked scales stay on the reference executor). The arithmetic is the reference's in f32:
// x / scale rounded half to even, plus the zero point, clamped to the integer type's range.
#include <limits>

#include "collage/ops/quantize.h"
#include "collage/te_ops.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

bool quantized_type(DType t) {
  return t == DType::u8 || t == DType::i8 || t == DType::u16 || t == DType::i16;
}

Expr f32(double v) { return te::make_const(DType::f32, v); }

// An integral f32 already inside t's range, converted to t through i32: x86 converts f32 vectors
// to i32 in one instruction, while a saturating conversion straight to 8 or 16 bits is scalar.
Expr to_quantized(DType t, const Expr& v) { return cast_to(t, cast_to(DType::i32, v)); }

// The integer range of `t`, as f32 bounds.
std::pair<Expr, Expr> range_of(DType t) {
  switch (t) {
    case DType::u8: return {f32(0), f32(255)};
    case DType::i8: return {f32(-128), f32(127)};
    case DType::u16: return {f32(0), f32(65535)};
    default: return {f32(-32768), f32(32767)};
  }
}

// Which entry of scale (and zero point) element `i` of x uses: the only one, or the one at the
// index of the quantization axis.
struct ScaleAt {
  te::Tensor scale, zero_point;  // zero_point undefined: 0
  int64_t axis = -1;             // -1: per tensor

  std::vector<Expr> index(const te::Tensor& t, const std::vector<te::Var>& i) const {
    if (axis < 0) return std::vector<Expr>(static_cast<size_t>(t.ndim()), Expr(int64_t{0}));
    return {Expr(i[static_cast<size_t>(axis)])};
  }
  Expr scale_at(const std::vector<te::Var>& i) const { return scale(index(scale, i)); }
  Expr zero_point_at(const std::vector<te::Var>& i) const {
    return zero_point.defined() ? cast_to(DType::i32, zero_point(index(zero_point, i)))
                                : te::make_const(DType::i32, 0);
  }
};

absl::StatusOr<ScaleAt> scale_at(const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<QuantizeAttrs>();
  ScaleAt s{in[1], in.size() > 2 ? in[2] : te::Tensor()};
  if (a.block_size > 0) return node_error(node, "blocked scales are not supported");
  if (s.scale.dtype() != DType::f32) return node_error(node, "only f32 scales are supported");
  if (shape_numel(s.scale.shape()) == 1) return s;
  auto axis = normalize_axis(node, a.axis, in[0].ndim());
  if (!axis.ok()) return axis.status();
  s.axis = *axis;
  return s;
}

Outputs quantize(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const TensorType& out = output_type(g, node);
  if (in[0].dtype() != DType::f32) return node_error(node, "only f32 inputs are supported");
  if (!quantized_type(out.dtype)) return node_error(node, "only 8- and 16-bit outputs are supported");
  auto s = scale_at(node, in);
  if (!s.ok()) return s.status();
  const auto [lo, hi] = range_of(out.dtype);
  te::Tensor x = in[0];
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr v = te::round(x(as_exprs(i)) / s->scale_at(i));
        if (s->zero_point.defined()) v = v + cast_to(DType::f32, s->zero_point_at(i));
        return to_quantized(out.dtype, te::minimum(te::maximum(v, lo), hi));
      },
      tensor_name(node))};
}

Outputs dequantize(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const TensorType& out = output_type(g, node);
  if (!quantized_type(in[0].dtype()))
    return node_error(node, "only 8- and 16-bit inputs are supported");
  if (out.dtype != DType::f32) return node_error(node, "only f32 outputs are supported");
  auto s = scale_at(node, in);
  if (!s.ok()) return s.status();
  te::Tensor x = in[0];
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr q = cast_to(DType::i32, x(as_exprs(i))) - s->zero_point_at(i);
        return cast_to(DType::f32, q) * s->scale_at(i);
      },
      tensor_name(node))};
}

// y = saturate(round(x / scale) + zp) with scale and zp from the range of x widened to hold 0.
Outputs dynamic_quantize(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0];
  if (x.dtype() != DType::f32) return node_error(node, "only f32 inputs are supported");
  for (ValueId v : node.outputs)
    if (v == kNoValue) return node_error(node, "an output in the middle is unused");
  const std::vector<bool> all(static_cast<size_t>(x.ndim()), true);
  const std::string name = tensor_name(node);
  auto extreme = [&](te::ReduceOp op, const char* suffix) {
    return reduce_over(
        x.shape(), all, false, op, [&](const std::vector<Expr>& idx) { return x(idx); },
        name + suffix);
  };
  te::Tensor mx = extreme(te::ReduceOp::max, ".max"), mn = extreme(te::ReduceOp::min, ".min");
  te::Tensor scale = te::compute(
      {},
      [&](const std::vector<te::Var>&) {
        Expr hi = te::maximum(mx({}), f32(0)), lo = te::minimum(mn({}), f32(0));
        return te::select(hi == lo, f32(1), hi - lo) / f32(255);
      },
      tensor_name(node, 1));
  te::Tensor zp_f = te::compute(
      {},
      [&](const std::vector<te::Var>&) {
        Expr lo = te::minimum(mn({}), f32(0));
        return te::round(te::minimum(te::maximum(f32(0) - lo / scale({}), f32(0)), f32(255)));
      },
      name + ".zp");
  te::Tensor y = te::compute(
      x.shape(),
      [&](const std::vector<te::Var>& i) {
        Expr v = te::round(x(as_exprs(i)) / scale({})) + zp_f({});
        return to_quantized(DType::u8, te::minimum(te::maximum(v, f32(0)), f32(255)));
      },
      name);
  te::Tensor zp = te::compute(
      {}, [&](const std::vector<te::Var>&) { return to_quantized(DType::u8, zp_f({})); },
      tensor_name(node, 2));
  std::vector<te::Tensor> outs = {y, scale, zp};
  outs.resize(node.outputs.size());
  return outs;
}

}  // namespace

void register_quantize_ops(TeOpRegistry& r) {
  r.add("QuantizeLinear", {quantize, nullptr});
  r.add("DequantizeLinear", {dequantize, nullptr});
  r.add("DynamicQuantizeLinear", {dynamic_quantize, nullptr});
}

}  // namespace collage::te_ops
