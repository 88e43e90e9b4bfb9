// TE computes of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (lib/ops/nn_loss.cpp):
// the loss of each target element (its class's log-probability, weighted, 0 where ignored), then
// none / sum / mean (the sum over the total weight of the elements not ignored), in f32. A target
// outside [0, C) reads the nearest class: the reference refuses it, generated code cannot report it.
#include <cmath>

#include "collage/ops/loss.h"
#include "core/str_cat.h"
#include "te_ops/reduce_util.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

TeOpDef loss_op(bool softmax) {
  return {[softmax](const Graph& g, const Node& node, std::span<const te::Tensor> in) -> Outputs {
    const auto& a = node.get<LossAttrs>();
    te::Tensor x = in[0], target = in[1];
    te::Tensor weight = in.size() > 2 ? in[2] : te::Tensor();
    if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
    if (x.ndim() < 2) return node_error(node, "input rank must be at least 2");
    const int64_t classes = x.shape()[1];
    const std::string name = tensor_name(node);
    std::vector<bool> over_classes(x.ndim(), false);
    over_classes[1] = true;
    // Log-softmax over the classes: each statistic once per reader.
    te::Tensor m_sum, sum, m;
    if (softmax) {
      auto row_max = [&](const std::string& n) {
        return reduce_over(
            x.shape(), over_classes, true, te::ReduceOp::max,
            [&](const std::vector<Expr>& idx) { return load_f32(x, idx); }, n);
      };
      m_sum = row_max(name + ".max0");
      m = row_max(name + ".max");
      sum = reduce_over(
          x.shape(), over_classes, true, te::ReduceOp::sum,
          [&](const std::vector<Expr>& idx) {
            return te::exp(load_f32(x, idx) - m_sum(stat_index(idx, over_classes)));
          },
          name + ".sum");
    }
    auto log_prob = [&](const std::vector<Expr>& idx) {
      if (!softmax) return load_f32(x, idx);
      std::vector<Expr> si = stat_index(idx, over_classes);
      return load_f32(x, idx) - m(si) - te::log(sum(si));
    };
    // Target element idx ([N, d...]): its class, whether ignored, its weight and its loss.
    auto cls = [&](const std::vector<Expr>& idx) { return cast_to(DType::i64, target(idx)); };
    auto ignored = [&](const std::vector<Expr>& idx) -> Expr {
      if (a.ignore_index == LossAttrs::kNoIgnoreIndex) return Expr(false);
      return cls(idx) == Expr(a.ignore_index);
    };
    const Expr zero = te::make_const(DType::f32, 0), one = te::make_const(DType::f32, 1);
    auto weight_of = [&](const std::vector<Expr>& idx) {
      Expr w = weight.defined() ? load_f32(weight, {clamp_index(cls(idx), classes)}) : one;
      return te::select(ignored(idx), zero, w);
    };
    auto loss_of = [&](const std::vector<Expr>& idx) {
      std::vector<Expr> xi = idx;
      xi.insert(xi.begin() + 1, clamp_index(cls(idx), classes));
      return te::select(ignored(idx), zero, zero - log_prob(xi) * weight_of(idx));
    };
    const TensorType& out = output_type(g, node);
    const Shape& ts = target.shape();
    std::vector<te::Tensor> outs;
    if (a.reduction == "none") {
      outs.push_back(te::compute(
          out.shape,
          [&](const std::vector<te::Var>& i) { return cast_to(out.dtype, loss_of(as_exprs(i))); },
          name));
    } else {
      const std::vector<bool> all(ts.size(), true);
      te::Tensor total = reduce_over(ts, all, false, te::ReduceOp::sum, loss_of, name + ".total");
      te::Tensor weights;
      if (a.reduction == "mean")
        weights = reduce_over(ts, all, false, te::ReduceOp::sum, weight_of, name + ".weights");
      outs.push_back(te::compute(
          out.shape,
          [&](const std::vector<te::Var>&) {
            Expr v = total(std::vector<Expr>{});
            if (weights.defined()) v = v / weights(std::vector<Expr>{});
            return cast_to(out.dtype, v);
          },
          name));
    }
    if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) {
      const TensorType& lp = output_type(g, node, 1);
      outs.push_back(te::compute(
          lp.shape,
          [&](const std::vector<te::Var>& i) { return cast_to(lp.dtype, log_prob(as_exprs(i))); },
          tensor_name(node, 1)));
    }
    return outs;
  }, nullptr};
}

}  // namespace

void register_loss_ops(TeOpRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", loss_op(false));
  r.add("SoftmaxCrossEntropyLoss", loss_op(true));
}

}  // namespace collage::te_ops
