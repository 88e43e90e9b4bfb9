// TE compute of Attention (ONNX 23-25; lib/ops/nn_attention.cpp defines it) on f32, f16 and bf16:
// the scores
// of each query against the cached and new keys (heads shared by groups of query heads),
// soft-capped, masked (attn_mask, causal, sliding window, padding lengths), softmax-normalised
// (a row with no attendable key gives zeros) and applied to V; the present key and value and the
// qk output. 16-bit inputs compute in f32 rounded to the input type wherever ONNX's definition
// makes a value of that type (scaled Q and K, the scores, the masked scores, the softmax; the
// softmax's exponentials and sum in softmax_precision), as the reference executor rounds them;
// a bf16 softmax, whose sum ONNX rounds at every add, is refused.
#include <cmath>

#include "collage/ops/attention.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

Expr f32(double v) { return te::make_const(DType::f32, v); }

Outputs attention(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  const auto& a = node.get<AttentionAttrs>();
  auto given = [&](size_t i) { return in.size() > i && in[i].defined(); };
  const te::Tensor q = in[0], k = in[1], v = in[2];
  const DType t = q.dtype();
  if (!is_float_like(t)) return node_error(node, "only float inputs are supported");
  for (size_t i = 0; i < in.size(); ++i)
    if (given(i) && i != 3 && i != 6 && in[i].dtype() != t)
      return node_error(node, str_cat("input ", i, " is ", dtype_name(in[i].dtype()), " and Q ",
                                      dtype_name(t)));
  if (given(3) && in[3].dtype() != t && in[3].dtype() != DType::boolean)
    return node_error(node, str_cat("attn_mask must be ", dtype_name(t), " or bool"));
  // The softmax's type (softmax_precision, an ONNX element type), for 16-bit inputs.
  DType soft = t;
  if (a.softmax_precision == 1 || a.softmax_precision == 11) soft = DType::f32;
  if (a.softmax_precision == 10) soft = DType::f16;
  if (a.softmax_precision == 16) soft = DType::bf16;
  if (t != DType::f32 && soft == DType::bf16)
    return node_error(node, "a bf16 softmax (ONNX rounds its sum at every add) is not supported");
  const bool narrow = t != DType::f32;
  // v rounded to the input type (rnd) or the softmax's (srnd), as f32; f32 inputs round nothing.
  auto rnd = [&](const Expr& v) { return narrow ? cast_to(DType::f32, cast_to(t, v)) : v; };
  auto srnd = [&](const Expr& v) {
    return narrow && soft != DType::f32 ? cast_to(DType::f32, cast_to(soft, v)) : v;
  };
  auto ld = [](const Expr& v) { return cast_to(DType::f32, v); };
  const bool three_d = q.ndim() == 3;
  const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
  int64_t hq, hk, len_q, len_kv, d, dv;
  if (three_d) {
    hq = a.q_num_heads, hk = a.kv_num_heads;
    if (hq < 1 || hk < 1) return node_error(node, "3-D inputs need q_num_heads and kv_num_heads");
    len_q = qs[1], len_kv = ks[1], d = qs[2] / hq, dv = vs[2] / hk;
  } else {
    hq = qs[1], hk = ks[1], len_q = qs[2], len_kv = ks[2], d = qs[3], dv = vs[3];
  }
  if (hk < 1 || hq % hk) return node_error(node, "q heads must be a multiple of kv heads");
  const int64_t batch = qs[0], group = hq / hk;
  const int64_t past = given(4) ? in[4].shape()[2] : 0, total = past + len_kv;
  const std::string name = tensor_name(node);

  // Element (b, h, s, e) of a [batch, heads, seq, size] view of a 3-D or 4-D input.
  auto at4 = [&](const te::Tensor& t, int64_t heads, Expr b, Expr h, Expr s, Expr e) -> Expr {
    if (!three_d) return t({b, h, s, e});
    return t({b, s, h * Expr(t.shape()[2] / heads) + e});
  };
  // The present keys and values: the cache, then the new ones.
  auto present = [&](const te::Tensor& fresh, const te::Tensor& cache, Expr b, Expr h, Expr j,
                     Expr e) -> Expr {
    if (!past) return at4(fresh, hk, b, h, j, e);
    return te::select(j < Expr(past), cache({b, h, clamp_index(j, past), e}),
                      at4(fresh, hk, b, h, clamp_index(j - Expr(past), len_kv), e));
  };
  auto key = [&](Expr b, Expr h, Expr j, Expr e) { return present(k, given(4) ? in[4] : te::Tensor(), b, h, j, e); };
  auto value = [&](Expr b, Expr h, Expr j, Expr e) { return present(v, given(5) ? in[5] : te::Tensor(), b, h, j, e); };

  // Q and K are each scaled by the square root of the scale.
  const Expr root =
      rnd(f32(std::sqrt(a.scale != 0.f ? a.scale : 1.0 / std::sqrt(static_cast<double>(d)))));
  const te::IterVar re = te::reduce_axis({0, d}, "e");
  te::Tensor raw = te::compute(
      {batch, hq, len_q, total},
      [&](const std::vector<te::Var>& i) {
        Expr kh = te::floordiv(i[1], Expr(group));
        return te::sum(rnd(ld(at4(q, hq, i[0], i[1], i[2], re)) * root) *
                           rnd(ld(key(i[0], kh, i[3], re)) * root),
                       {re});
      },
      name + ".qk");
  auto score = [&](Expr b, Expr h, Expr i, Expr j) {
    Expr s = rnd(raw({b, h, i, j}));
    if (a.softcap > 0.f) s = rnd(f32(a.softcap) * te::tanh(s / f32(a.softcap)));
    return s;
  };
  const Expr neg_inf = f32(-INFINITY);
  auto bias = [&](Expr b, Expr h, Expr i, Expr j) {
    Expr m = f32(0);
    if (given(3)) {
      const te::Tensor& mask = in[3];
      const Shape& ms = mask.shape();
      const Expr full[4] = {b, h, i, clamp_index(j, ms.back())};
      std::vector<Expr> idx;
      for (size_t ax = 0; ax < ms.size(); ++ax) {
        const size_t axis = 4 - ms.size() + ax;
        idx.push_back(ms[ax] == 1 && axis < 3 ? Expr(int64_t{0}) : full[axis]);
      }
      Expr mv = mask(idx);
      mv = mask.dtype() == DType::boolean ? te::select(mv, f32(0), neg_inf) : ld(mv);
      m = ms.back() < total ? te::select(j >= Expr(ms.back()), neg_inf, mv) : mv;
    }
    // Where query 0 sits among the keys: after the cache, or before the batch's valid length.
    Expr offset = Expr(past), valid = Expr(total);
    if (given(6)) {
      valid = in[6]({b});
      offset = valid - Expr(len_q);
    }
    Expr diff = i + offset - j;
    Expr masked = j >= valid;
    if (a.is_causal) masked = masked || diff < Expr(int64_t{0});
    if (a.left_window_size >= 0) masked = masked || diff > Expr(a.left_window_size);
    if (a.right_window_size >= 0) masked = masked || Expr(int64_t{0}) - diff > Expr(a.right_window_size);
    return te::select(masked, neg_inf, m);
  };
  auto masked = [&](Expr b, Expr h, Expr i, Expr j) {
    return rnd(score(b, h, i, j) + bias(b, h, i, j));
  };
  const te::IterVar rj = te::reduce_axis({0, total}, "j");
  te::Tensor top = te::compute(
      {batch, hq, len_q},
      [&](const std::vector<te::Var>& i) { return te::max(masked(i[0], i[1], i[2], rj), {rj}); },
      name + ".max");
  auto prob = [&](Expr b, Expr h, Expr i, Expr j) {
    Expr m = top({b, h, i}), s = masked(b, h, i, j);
    return te::select(m == neg_inf || s == neg_inf, f32(0), srnd(te::exp(srnd(s - m))));
  };
  const te::IterVar rs = te::reduce_axis({0, total}, "j");
  te::Tensor sum = te::compute(
      {batch, hq, len_q},
      [&](const std::vector<te::Var>& i) { return te::sum(prob(i[0], i[1], i[2], rs), {rs}); },
      name + ".sum");
  auto softmax = [&](Expr b, Expr h, Expr i, Expr j) {
    Expr p = prob(b, h, i, j), s = srnd(sum({b, h, i}));
    return rnd(te::select(s > f32(0), srnd(p / s), p));
  };
  const te::IterVar ry = te::reduce_axis({0, total}, "j");
  auto y_sum = [&](Expr b, Expr h, Expr i, Expr e) {
    return te::sum(softmax(b, h, i, ry) * ld(value(b, te::floordiv(h, Expr(group)), ry, e)), {ry});
  };
  // 16-bit: Y in f32 over [batch, heads, query, value size], then the output rounds it, a stage
  // of its own (a reduction is the outermost expression of its compute). f32: the output is the
  // reduction.
  te::Tensor y_acc;
  if (narrow)
    y_acc = te::compute(
        {batch, hq, len_q, dv},
        [&](const std::vector<te::Var>& i) { return y_sum(i[0], i[1], i[2], i[3]); }, name + ".y");
  auto y = [&](Expr b, Expr h, Expr i, Expr e) {
    return narrow ? cast_to(t, y_acc({b, h, i, e})) : y_sum(b, h, i, e);
  };
  std::vector<te::Tensor> outs;
  const Shape& ys = output_type(g, node).shape;
  if (three_d)
    outs.push_back(te::compute(
        ys,
        [&](const std::vector<te::Var>& i) {
          return y(i[0], te::floordiv(i[2], Expr(dv)), i[1], te::floormod(i[2], Expr(dv)));
        },
        name));
  else
    outs.push_back(te::compute(
        ys, [&](const std::vector<te::Var>& i) { return y(i[0], i[1], i[2], i[3]); }, name));
  for (size_t o = 1; o < node.outputs.size(); ++o) {
    if (node.outputs[o] == kNoValue)
      return node_error(node, str_cat("output ", o, " is absent while a later one is used"));
    const Shape& os = output_type(g, node, static_cast<int>(o)).shape;
    outs.push_back(te::compute(
        os,
        [&](const std::vector<te::Var>& i) {
          if (o == 1) return cast_to(t, key(i[0], i[1], i[2], i[3]));
          if (o == 2) return cast_to(t, value(i[0], i[1], i[2], i[3]));
          if (a.qk_matmul_output_mode == 2) return cast_to(t, masked(i[0], i[1], i[2], i[3]));
          if (a.qk_matmul_output_mode == 3) return cast_to(t, softmax(i[0], i[1], i[2], i[3]));
          return cast_to(t, score(i[0], i[1], i[2], i[3]));
        },
        tensor_name(node, static_cast<int>(o))));
  }
  return outs;
}

}  // namespace

void register_attention_op(TeOpRegistry& r) { r.add("Attention", {attention, nullptr}); }

}  // namespace collage::te_ops
