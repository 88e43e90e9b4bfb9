// TE computes of QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (lib/ops/quantize.cpp
// defines them): f32 values, 8- and 16-bit integers, scales per tensor, per index of `axis` or per
// block of `axis`. The arithmetic is the reference's in f32:
// x / scale rounded half to even, plus the zero point, clamped to the integer type's range.
#include <algorithm>

#include "collage/ops/quantize.h"
#include "collage/te_ops.h"
#include "te_ops/quantize_schedule.h"
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

// Saturates an integral f32 to t: the generated code's float-to-integer conversion clamps to t's
// range in float (NaN to 0) and converts a vector at a time, so no clamp is written here.
Expr saturate_to(DType t, const Expr& v) { return cast_to(t, v); }

// Which entry of scale (and zero point) element `i` of x uses: the only one, or the one at the
// index of the quantization axis.
// Blocked scales (block > 0) have x's rank, with x's index but i[axis] / block along the axis.
struct ScaleAt {
  te::Tensor scale, zero_point;  // zero_point undefined: 0
  int64_t axis = -1;             // -1: per tensor
  int64_t block = 0;

  std::vector<Expr> index(const te::Tensor& t, const std::vector<te::Var>& i) const {
    if (axis < 0) return std::vector<Expr>(static_cast<size_t>(t.ndim()), Expr(int64_t{0}));
    if (block == 0) return {Expr(i[static_cast<size_t>(axis)])};
    std::vector<Expr> at = as_exprs(i);
    at[static_cast<size_t>(axis)] = at[static_cast<size_t>(axis)] / Expr(block);
    return at;
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
  if (s.scale.dtype() != DType::f32) return node_error(node, "only f32 scales are supported");
  if (shape_numel(s.scale.shape()) == 1 && a.block_size <= 0) return s;
  auto axis = normalize_axis(node, a.axis, in[0].ndim());
  if (!axis.ok()) return axis.status();
  s.axis = *axis;
  if (a.block_size > 0) {
    // The reference checked the shape: x's, with ceil(x[axis] / block_size) along the axis.
    if (s.scale.ndim() != in[0].ndim()) return node_error(node, "blocked scale of another rank");
    s.block = a.block_size;
  }
  return s;
}

Outputs quantize(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const TensorType& out = output_type(g, node);
  if (in[0].dtype() != DType::f32) return node_error(node, "only f32 inputs are supported");
  if (!quantized_type(out.dtype)) return node_error(node, "only 8- and 16-bit outputs are supported");
  auto s = scale_at(node, in);
  if (!s.ok()) return s.status();
  te::Tensor x = in[0];
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr v = te::round(x(as_exprs(i)) / s->scale_at(i));
        if (s->zero_point.defined()) v = v + cast_to(DType::f32, s->zero_point_at(i));
        return saturate_to(out.dtype, v);
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
  const std::string name = tensor_name(node);
  // In two steps: over the leading axes, keeping trailing ones of up to kMaxPartial values (reads
  // contiguous along the last, so the schedule keeps a vector of it at a time, and the vectors of
  // a row are taken one after the other: one pass over x), then over those.
  constexpr int64_t kMaxPartial = 4096;
  const int rank = x.ndim();
  std::vector<bool> leading(static_cast<size_t>(rank), true);
  int64_t kept = 1;
  const int64_t n = shape_numel(x.shape());
  // The leading axes keep at least 8 values per partial result: they do the bulk of the work.
  for (int k = rank - 1; k > 0 && kept * x.shape()[k] <= std::min(kMaxPartial, n / 8); --k) {
    leading[static_cast<size_t>(k)] = false;
    kept *= x.shape()[k];
  }
  auto extreme = [&](te::ReduceOp op, const char* suffix) {
    if (kept == 1)
      return reduce_over(
          x.shape(), std::vector<bool>(static_cast<size_t>(rank), true), false, op,
          [&](const std::vector<Expr>& idx) { return x(idx); }, name + suffix);
    te::Tensor part = reduce_over(
        x.shape(), leading, false, op, [&](const std::vector<Expr>& idx) { return x(idx); },
        name + suffix + ".part");
    return reduce_over(
        part.shape(), std::vector<bool>(static_cast<size_t>(part.ndim()), true), false, op,
        [&](const std::vector<Expr>& idx) { return part(idx); }, name + suffix);
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
        return saturate_to(DType::u8, v);
      },
      name);
  te::Tensor zp = te::compute(
      {}, [&](const std::vector<te::Var>&) { return saturate_to(DType::u8, zp_f({})); },
      tensor_name(node, 2));
  std::vector<te::Tensor> outs = {y, scale, zp};
  outs.resize(node.outputs.size());
  return outs;
}

}  // namespace

void register_quantize_ops(TeOpRegistry& r) {
  r.add("QuantizeLinear", {quantize, nullptr});
  r.add("DequantizeLinear", {dequantize, nullptr});
  r.add("DynamicQuantizeLinear", {dynamic_quantize, schedule_dynamic_quantize});
}

}  // namespace collage::te_ops
