// TE computes of the reductions and of the operators built on them: ReduceSum/Mean/Max/Min/Prod,
// ArgMax, ArgMin, Softmax, LogSoftmax, LayerNormalization, RMSNormalization and
// InstanceNormalization. Statistics accumulate in f32.
#include <functional>

#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/ops/normalization.h"
#include "collage/ops/trees.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd.
TeOpDef reduce_op(te::ReduceOp op, bool mean) {
  return {[op, mean](const Graph& g, const Node& node, std::span<const te::Tensor> in) -> Outputs {
    const auto& a = node.get<ReduceAttrs>();
    te::Tensor x = in[0];
    const TensorType& out = output_type(g, node);
    if (x.dtype() == DType::boolean) return node_error(node, "bool inputs are not supported");
    const int64_t rank = x.ndim();
    std::vector<bool> reduced(rank, a.axes.empty() && !a.noop_with_empty_axes);
    for (int64_t axis : a.axes) {
      auto k = normalize_axis(node, axis, rank);
      if (!k.ok()) return k.status();
      reduced[*k] = true;
    }
    const std::string name = tensor_name(node);
    if (std::none_of(reduced.begin(), reduced.end(), [](bool b) { return b; }))
      return std::vector<te::Tensor>{te::compute(
          out.shape, [&](const std::vector<te::Var>& i) { return x(as_exprs(i)); }, name)};
    te::Tensor acc = reduce_over(
        x.shape(), reduced, a.keepdims != 0, op,
        [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, name + ".acc");
    int64_t count = 1;
    for (int64_t k = 0; k < rank; ++k)
      if (reduced[k]) count *= x.shape()[k];
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          Expr v = acc(as_exprs(i));
          if (mean) v = is_float(v.dtype()) ? v / te::make_const(v.dtype(), count)
                                                 : te::div(v, te::make_const(v.dtype(), count));
          return cast_to(out.dtype, v);
        },
        name)};
  }, nullptr};
}

// ArgMax (`min` false) and ArgMin.
Outputs arg_extreme(const Graph& g, const Node& node, std::span<const te::Tensor> in, bool min) {
  const auto& a = node.get<ArgMaxAttrs>();
  te::Tensor x = in[0];
  if (x.dtype() == DType::boolean) return node_error(node, "bool inputs are not supported");
  auto axis = normalize_axis(node, a.axis, x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<bool> reduced(x.ndim(), false);
  reduced[*axis] = true;
  const int64_t n = x.shape()[*axis];
  const std::string name = tensor_name(node);
  te::Tensor m = reduce_over(
      x.shape(), reduced, true, min ? te::ReduceOp::min : te::ReduceOp::max,
      [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, name + ".extreme");
  // The first (or last) position holding the extreme.
  const bool last = a.select_last_index != 0;
  te::Tensor pos = reduce_over(
      x.shape(), reduced, a.keepdims != 0, last ? te::ReduceOp::max : te::ReduceOp::min,
      [&](const std::vector<Expr>& idx) {
        return te::select(load_f32(x, idx) == m(stat_index(idx, reduced)), idx[*axis],
                          Expr(last ? int64_t{-1} : n));
      },
      name + ".pos");
  return std::vector<te::Tensor>{te::compute(
      output_type(g, node).shape,
      [&](const std::vector<te::Var>& i) {
        // A row whose extreme is NaN matches nowhere: NaN is picked only as the first element.
        Expr p = pos(as_exprs(i));
        return te::select(p == Expr(last ? int64_t{-1} : n), Expr(last ? n - 1 : int64_t{0}), p);
      },
      name)};
}

// Softmax and LogSoftmax over one axis, in f32 (f64 too). f16 follows ONNX's definition as the
// reference computes it (lib/ops/nn_softmax.cpp): x - max and its exp each rounded to f16, their
// sum (accumulated wider) rounded, and the quotient rounded; computing in f32 and rounding once
// differs by a step in some elements. A bf16 Softmax, whose sum ONNX rounds at every add, is
// refused.
TeOpDef softmax_op(bool log) {
  return {[log](const Graph& g, const Node& node, std::span<const te::Tensor> in) -> Outputs {
    te::Tensor x = in[0];
    // f64 inputs too (load_f32 widens only 16-bit floats).
    if (!is_float_like(x.dtype()) && x.dtype() != DType::f64)
      return node_error(node, "only float inputs are supported");
    if (x.dtype() == DType::bf16)
      return node_error(node, "a bf16 softmax (ONNX rounds its sum at every add) is not supported");
    // v rounded to f16, as f32; f32 and f64 round nothing.
    auto rnd = [&](const Expr& v) { return round16(x.dtype(), v); };
    auto axis = normalize_axis(node, node.get<SoftmaxAttrs>().axis, x.ndim());
    if (!axis.ok()) return axis.status();
    std::vector<bool> reduced(x.ndim(), false);
    reduced[*axis] = true;
    const std::string name = tensor_name(node);
    // The maximum once per reader, so that each statistic has one reader and can be computed at
    // the output's row loop (a stage computed at a loop may feed only one stage): the sum's whole
    // blocks, the sum's last partial block (a long row not a multiple of the partials: ViT's 197,
    // serial and scalar otherwise, 25x slower than 128), and the output.
    auto row_max = [&](const std::string& n) {
      return reduce_over(
          x.shape(), reduced, true, te::ReduceOp::max,
          [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, n);
    };
    auto exp_less = [&](const te::Tensor& max) {
      return [&, max](const std::vector<Expr>& idx) {
        return rnd(te::exp(rnd(load_f32(x, idx) - max(stat_index(idx, reduced)))));
      };
    };
    te::Tensor m_sum = row_max(name + ".max0");
    te::Tensor m_tail = row_max(name + ".max1");
    te::Tensor m = row_max(name + ".max");
    te::Tensor s = reduce_over(x.shape(), reduced, true, te::ReduceOp::sum, exp_less(m_sum),
                               exp_less(m_tail), name + ".sum");
    const TensorType& out = output_type(g, node);
    return std::vector<te::Tensor>{te::compute(
        out.shape,
        [&](const std::vector<te::Var>& i) {
          std::vector<Expr> idx = as_exprs(i);
          std::vector<Expr> si = stat_index(idx, reduced);
          Expr d = rnd(load_f32(x, idx) - m(si));
          return cast_to(out.dtype, log ? d - te::log(s(si)) : rnd(te::exp(d)) / rnd(s(si)));
        },
        name)};
  }, nullptr};
}

// (x - mean) / sqrt(var + eps) * scale + bias over the axes with reduced[k] set, with two-pass
// statistics; scale(idx) and bias(idx) give the affine terms of element idx. A 16-bit out_dtype
// rounds the normalised value, its product with the scale and the sum with the bias to it, as
// LayerNormalization's definition does (stash_type 1: the statistics and the normalised value in
// f32, cast back to the input's type before Scale and B; lib/ops/nn_norm.cpp).
te::Tensor normalize(const te::Tensor& x, const std::vector<bool>& reduced, double epsilon,
                     const std::function<Expr(const std::vector<Expr>&)>& scale,
                     const std::function<Expr(const std::vector<Expr>&)>& bias, bool has_bias,
                     DType out_dtype, const std::string& name) {
  int64_t count = 1;
  for (size_t k = 0; k < reduced.size(); ++k)
    if (reduced[k]) count *= x.shape()[k];
  const Expr inv_n = te::make_const(DType::f32, 1.0 / static_cast<double>(count));
  auto at = [&](const std::vector<Expr>& idx) { return load_f32(x, idx); };
  te::Tensor sum = reduce_over(x.shape(), reduced, true, te::ReduceOp::sum, at, name + ".sum");
  te::Tensor sq = squared_deviations(x.shape(), reduced, true, inv_n, at, name + ".sq");
  return te::compute(
      x.shape(),
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        std::vector<Expr> si = stat_index(idx, reduced);
        Expr y = (load_f32(x, idx) - sum(si) * inv_n) *
                 te::rsqrt(sq(si) * inv_n + te::make_const(DType::f32, epsilon));
        y = round16(out_dtype, round16(out_dtype, y) * scale(idx));
        return cast_to(out_dtype, has_bias ? y + bias(idx) : y);
      },
      name);
}

Outputs layer_norm(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<LayerNormalizationAttrs>();
  te::Tensor x = in[0], scale = in[1];
  te::Tensor bias = in.size() > 2 ? in[2] : te::Tensor();
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  auto axis = normalize_axis(node, a.axis, x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<bool> reduced(x.ndim(), false);
  for (int64_t k = *axis; k < x.ndim(); ++k) reduced[k] = true;
  // Scale and B broadcast onto the normalised axes (aligned at the end).
  auto affine = [](const te::Tensor& t, const std::vector<Expr>& idx) -> Expr {
    if (!t.defined()) return te::make_const(DType::f32, 0);
    std::vector<Expr> ti;
    const size_t lead = idx.size() - t.shape().size();
    for (size_t k = 0; k < t.shape().size(); ++k)
      ti.push_back(t.shape()[k] == 1 ? Expr(int64_t{0}) : idx[lead + k]);
    return load_f32(t, ti);
  };
  std::vector<te::Tensor> outs = {normalize(
      x, reduced, a.epsilon, [&](const std::vector<Expr>& i) { return affine(scale, i); },
      [&](const std::vector<Expr>& i) { return affine(bias, i); }, bias.defined(),
      output_type(g, node).dtype, tensor_name(node))};
  if (node.outputs.size() > 1) {
    // Mean and InvStdDev (f32, size 1 on the normalised axes), from statistics of their own.
    for (size_t o = 1; o < node.outputs.size(); ++o)
      if (node.outputs[o] == kNoValue)
        return node_error(node, str_cat("output ", o, " is absent while a later one is used"));
    const Shape& stats = output_type(g, node, 1).shape;
    int64_t count = 1;
    for (int64_t k = *axis; k < x.ndim(); ++k) count *= x.shape()[k];
    const Expr inv_n = te::make_const(DType::f32, 1.0 / static_cast<double>(count));
    auto total = [&](const std::string& n) {
      return reduce_over(
          x.shape(), reduced, true, te::ReduceOp::sum,
          [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, n);
    };
    te::Tensor sum = total(tensor_name(node, 1) + ".sum");
    outs.push_back(te::compute(
        stats, [&](const std::vector<te::Var>& i) { return sum(as_exprs(i)) * inv_n; },
        tensor_name(node, 1)));
    if (node.outputs.size() > 2) {
      te::Tensor centre = total(tensor_name(node, 2) + ".sum");
      te::Tensor sq = reduce_over(
          x.shape(), reduced, true, te::ReduceOp::sum,
          [&](const std::vector<Expr>& idx) {
            Expr d = load_f32(x, idx) - centre(stat_index(idx, reduced)) * inv_n;
            return d * d;
          },
          tensor_name(node, 2) + ".sq");
      outs.push_back(te::compute(
          stats,
          [&](const std::vector<te::Var>& i) {
            return te::rsqrt(sq(as_exprs(i)) * inv_n + te::make_const(DType::f32, a.epsilon));
          },
          tensor_name(node, 2)));
    }
  }
  return outs;
}

// X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * scale, scale broadcast onto those axes.
Outputs rms_norm(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<RMSNormalizationAttrs>();
  te::Tensor x = in[0], scale = in[1];
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  auto axis = normalize_axis(node, a.axis, x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<bool> reduced(x.ndim(), false);
  int64_t count = 1;
  for (int64_t k = *axis; k < x.ndim(); ++k) {
    reduced[k] = true;
    count *= x.shape()[k];
  }
  const std::string name = tensor_name(node);
  te::Tensor sq = reduce_over(
      x.shape(), reduced, true, te::ReduceOp::sum,
      [&](const std::vector<Expr>& idx) {
        Expr v = load_f32(x, idx);
        return v * v;
      },
      name + ".sq");
  const TensorType& out = output_type(g, node);
  const Expr inv_n = te::make_const(DType::f32, 1.0 / static_cast<double>(count));
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        std::vector<Expr> si;
        const size_t lead = idx.size() - scale.shape().size();
        for (size_t k = 0; k < scale.shape().size(); ++k)
          si.push_back(scale.shape()[k] == 1 ? Expr(int64_t{0}) : idx[lead + k]);
        Expr y = load_f32(x, idx) *
                 te::rsqrt(sq(stat_index(idx, reduced)) * inv_n +
                           te::make_const(DType::f32, a.epsilon));
        // 16-bit: the normalised value rounded before the scale, as ONNX's definition rounds it.
        return cast_to(out.dtype, round16(out.dtype, y) * load_f32(scale, si));
      },
      name)};
}

Outputs instance_norm(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  te::Tensor x = in[0], scale = in[1], bias = in[2];
  if (x.ndim() < 3) return node_error(node, "input rank must be at least 3");
  std::vector<bool> reduced(x.ndim(), true);
  reduced[0] = reduced[1] = false;
  return std::vector<te::Tensor>{normalize(
      x, reduced, node.get<InstanceNormalizationAttrs>().epsilon,
      [&](const std::vector<Expr>& i) { return load_f32(scale, {i[1]}); },
      [&](const std::vector<Expr>& i) { return load_f32(bias, {i[1]}); }, true,
      output_type(g, node).dtype, tensor_name(node))};
}

}  // namespace

void register_reduction_ops(TeOpRegistry& r) {
  r.add("ReduceSum", reduce_op(te::ReduceOp::sum, false));
  r.add("ReduceMean", reduce_op(te::ReduceOp::sum, true));
  r.add("ReduceMax", reduce_op(te::ReduceOp::max, false));
  r.add("ReduceMin", reduce_op(te::ReduceOp::min, false));
  r.add("ReduceProd", reduce_op(te::ReduceOp::prod, false));
  r.add("ArgMax", {[](const Graph& g, const Node& n, std::span<const te::Tensor> in) {
                     return arg_extreme(g, n, in, false);
                   }, nullptr});
  r.add("ArgMin", {[](const Graph& g, const Node& n, std::span<const te::Tensor> in) {
                     return arg_extreme(g, n, in, true);
                   }, nullptr});
  r.add("Softmax", softmax_op(false));
  r.add("LogSoftmax", softmax_op(true));
  r.add("LayerNormalization", {layer_norm, nullptr});
  r.add("RMSNormalization", {rms_norm, nullptr});
  r.add("InstanceNormalization", {instance_norm, nullptr});
}

}  // namespace collage::te_ops
