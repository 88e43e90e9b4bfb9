// TE compute of BatchNormalizationTraining (lib/ops/nn_batch_norm_training.cpp defines it) on
// f32: per channel, the mean and population variance over N and the spatial axes (two passes,
// f32 sums), Y normalised with them, and the running mean and variance blended by momentum.
// Each output reads statistics of its own, as a stage computed at a loop may feed one stage.
#include "collage/ops/nn.h"
#include "collage/te_ops.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Expr f32(double v) { return te::make_const(DType::f32, v); }

Outputs batch_norm_training(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<BatchNormalizationAttrs>();
  const te::Tensor x = in[0];
  for (const te::Tensor& t : in)
    if (t.dtype() != DType::f32) return node_error(node, "only f32 inputs are supported");
  if (x.ndim() < 2) return node_error(node, "input must be N x C x ...");
  std::vector<bool> reduced(x.ndim(), true);
  reduced[1] = false;
  int64_t count = 1;
  for (int64_t k = 0; k < x.ndim(); ++k)
    if (k != 1) count *= x.shape()[k];
  const Expr inv_n = f32(count ? 1.0 / static_cast<double>(count) : 0.0);
  const std::string name = tensor_name(node);
  auto sum = [&](bool keep, const std::string& n) {
    return reduce_over(
        x.shape(), reduced, keep, te::ReduceOp::sum,
        [&](const std::vector<Expr>& idx) { return x(idx); }, n);
  };
  auto squares = [&](bool keep, const std::string& n) {
    return squared_deviations(
        x.shape(), reduced, keep, inv_n, [&](const std::vector<Expr>& idx) { return x(idx); }, n);
  };
  te::Tensor mean_y = sum(true, name + ".sum");
  te::Tensor sq_y = squares(true, name + ".sq");
  std::vector<te::Tensor> outs = {te::compute(
      x.shape(),
      [&](const std::vector<te::Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        std::vector<Expr> si = stat_index(idx, reduced);
        Expr mul = in[1]({idx[1]}) * te::rsqrt(sq_y(si) * inv_n + f32(a.epsilon));
        return (x(idx) - mean_y(si) * inv_n) * mul + in[2]({idx[1]});
      },
      name)};
  const Expr m = f32(a.momentum), rest = f32(1.0 - static_cast<double>(a.momentum));
  for (size_t o = 1; o < node.outputs.size() && o < 3; ++o) {
    if (node.outputs[o] == kNoValue) return node_error(node, "an output before a used one is absent");
    const std::string n = tensor_name(node, static_cast<int>(o));
    te::Tensor stat = o == 1 ? sum(false, n + ".sum") : squares(false, n + ".sq");
    outs.push_back(te::compute(
        {x.shape()[1]},
        [&, o, stat](const std::vector<te::Var>& i) {
          return in[o + 2]({Expr(i[0])}) * m + stat({Expr(i[0])}) * inv_n * rest;
        },
        n));
  }
  return outs;
}

}  // namespace

void register_batch_norm_training_op(TeOpRegistry& r) {
  r.add("BatchNormalizationTraining", {batch_norm_training, nullptr});
}

}  // namespace collage::te_ops
