// TE compute of RotaryEmbedding (ONNX 23; lib/ops/nn_rotary.cpp defines it), in f32: the first
// rotary_embedding_dim entries of each head rotated in pairs (adjacent, or the two halves) by the
// angles whose cosines and sines the caches hold, rows picked by position_ids or by (batch, seq).
// A position outside the caches reads the nearest row: the reference refuses it, generated code
// cannot report it.
#include "collage/ops/attention.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Outputs rotary(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<RotaryEmbeddingAttrs>();
  te::Tensor x = in[0], cos = in[1], sin = in[2];
  te::Tensor positions = in.size() > 3 ? in[3] : te::Tensor();
  if (!is_float_like(x.dtype())) return node_error(node, "only float inputs are supported");
  const bool four_d = x.ndim() == 4;
  if (!four_d && (x.ndim() != 3 || a.num_heads < 1))
    return node_error(node, "input must be 4-D, or 3-D with num_heads");
  const int64_t head = four_d ? x.shape()[3] : x.shape()[2] / a.num_heads;
  const int64_t rot = a.rotary_embedding_dim > 0 ? a.rotary_embedding_dim : head;
  const int64_t half = rot / 2;
  const TensorType& out = output_type(g, node);
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr b = i[0], s = four_d ? Expr(i[2]) : Expr(i[1]);
        Expr e = four_d ? Expr(i[3]) : te::floormod(i[2], Expr(head));
        // x at entry `at` of the same head.
        auto load = [&](Expr at) {
          std::vector<Expr> idx(i.begin(), i.end());
          idx.back() = four_d ? at : i[2] - e + at;
          return cast_to(DType::f32, x(idx));
        };
        Expr k = clamp_index(a.interleaved ? te::floordiv(e, Expr(int64_t{2}))
                                           : te::select(e < Expr(half), e, e - Expr(half)),
                             half);
        Expr first = a.interleaved ? te::floormod(e, Expr(int64_t{2})) == Expr(int64_t{0})
                                   : e < Expr(half);
        std::vector<Expr> ci;
        if (positions.defined())
          ci = {clamp_index(positions({b, s}), cos.shape()[0]), k};
        else
          ci = {b, s, k};
        Expr c = cast_to(DType::f32, cos(ci)), sn = cast_to(DType::f32, sin(ci));
        Expr x1 = load(a.interleaved ? k * Expr(int64_t{2}) : k);
        Expr x2 = load(a.interleaved ? k * Expr(int64_t{2}) + Expr(int64_t{1}) : k + Expr(half));
        Expr rotated = te::select(first, c * x1 - sn * x2, sn * x1 + c * x2);
        return cast_to(out.dtype, te::select(e < Expr(rot), rotated, load(e)));
      },
      tensor_name(node))};
}

}  // namespace

void register_rotary_op(TeOpRegistry& r) { r.add("RotaryEmbedding", {rotary, nullptr}); }

}  // namespace collage::te_ops
