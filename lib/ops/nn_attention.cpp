// Attention (ONNX 23-25) in the reference executor: the scores of each query against every cached
// and new key, soft-capped, masked (attn_mask, causal, sliding window, padding),
// softmax-normalised (a row with no attendable key gives zeros) and applied to V. Computed in
// double, rounded to the input type where ONNX's definition produces a value of that type
// (scaled Q and K, the scores, the masked scores, the softmax, Y), so 16-bit inputs round alike.
#include <cmath>
#include <limits>

#include "collage/ops/attention.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The sizes of one Attention node.
struct Dims {
  bool three_d = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past = 0, head = 0,
          v_head = 0;
  int64_t total() const { return past + kv_len; }
};

absl::StatusOr<Dims> dims_of(const AttentionAttrs& a, const std::vector<const Shape*>& in) {
  const Shape& q = *in[0];
  const Shape& k = *in[1];
  const Shape& v = *in[2];
  Dims d;
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    return absl::InvalidArgumentError("Q, K and V must all be 3-D or all 4-D");
  d.three_d = q.size() == 3;
  d.batch = q[0];
  if (k[0] != d.batch || v[0] != d.batch)
    return absl::InvalidArgumentError("Q, K and V have different batch sizes");
  if (d.three_d) {
    if (a.q_num_heads < 1 || a.kv_num_heads < 1)
      return absl::InvalidArgumentError("3-D inputs need q_num_heads and kv_num_heads");
    d.q_heads = a.q_num_heads, d.kv_heads = a.kv_num_heads;
    if (q[2] % d.q_heads || k[2] % d.kv_heads || v[2] % d.kv_heads)
      return absl::InvalidArgumentError("the hidden sizes are not multiples of the head counts");
    d.q_len = q[1], d.kv_len = k[1], d.head = q[2] / d.q_heads, d.v_head = v[2] / d.kv_heads;
    if (k[2] / d.kv_heads != d.head) return absl::InvalidArgumentError("Q and K head sizes differ");
    if (v[1] != d.kv_len) return absl::InvalidArgumentError("K and V lengths differ");
  } else {
    d.q_heads = q[1], d.kv_heads = k[1], d.q_len = q[2], d.kv_len = k[2], d.head = q[3];
    d.v_head = v[3];
    if (k[3] != d.head) return absl::InvalidArgumentError("Q and K head sizes differ");
    if (v[1] != d.kv_heads || v[2] != d.kv_len)
      return absl::InvalidArgumentError("V does not match K");
  }
  if (d.kv_heads < 1 || d.q_heads % d.kv_heads)
    return absl::InvalidArgumentError("q heads must be a multiple of kv heads");
  if (in[4] || in[5]) {
    if (!in[4] || !in[5]) return absl::InvalidArgumentError("past_key and past_value go together");
    const Shape& pk = *in[4];
    const Shape& pv = *in[5];
    if (pk.size() != 4 || pv.size() != 4 || pk[0] != d.batch || pk[1] != d.kv_heads ||
        pk[3] != d.head || pv[0] != d.batch || pv[1] != d.kv_heads || pv[2] != pk[2] ||
        pv[3] != d.v_head)
      return absl::InvalidArgumentError("past_key / past_value do not match K and V");
    d.past = pk[2];
  }
  if (in[3]) {
    const Shape& m = *in[3];
    const Shape full = {d.batch, d.q_heads, d.q_len, d.total()};
    if (m.empty() || m.size() > 4 || m.back() > d.total())
      return absl::InvalidArgumentError(str_cat("attn_mask has shape ", shape_to_string(m)));
    for (size_t i = 0; i + 1 < m.size(); ++i) {
      const int64_t want = full[4 - m.size() + i];
      if (m[i] != 1 && m[i] != want)
        return absl::InvalidArgumentError(str_cat("attn_mask ", shape_to_string(m),
                                                  " does not broadcast to ",
                                                  shape_to_string(full)));
    }
  }
  if (in[6] && (*in[6] != Shape{d.batch}))
    return absl::InvalidArgumentError("nonpad_kv_seqlen must have one entry per batch");
  return d;
}

std::vector<const Shape*> shapes(const InferContext& ctx) {
  std::vector<const Shape*> s(7, nullptr);
  for (int i = 0; i < 7; ++i)
    if (ctx.has_input(i)) s[i] = &ctx.input(i).shape;
  return s;
}

absl::Status infer_attention(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 4); !s.ok()) return s;
  for (int i : {0, 1, 2}) {
    if (absl::Status s = check_dtype(ctx, i, kFloatTypes); !s.ok()) return s;
    if (absl::Status s = check_same_dtype(ctx, 0, i); !s.ok()) return s;
  }
  if (ctx.has_input(3) && ctx.input(3).dtype != DType::boolean)
    if (absl::Status s = check_same_dtype(ctx, 0, 3); !s.ok()) return s;
  if (ctx.has_input(6) && ctx.input(6).dtype != DType::i64)
    return ctx.error("nonpad_kv_seqlen must be i64");
  if (ctx.has_input(6) && ctx.has_input(4))
    return ctx.error("nonpad_kv_seqlen cannot be combined with past_key and past_value");
  auto d = dims_of(ctx.attrs<AttentionAttrs>(), shapes(ctx));
  if (!d.ok()) return ctx.error(str_cat(d.status().message()));
  const DType t = ctx.input(0).dtype;
  ctx.set_output(0, {t, d->three_d ? Shape{d->batch, d->q_len, d->q_heads * d->v_head}
                                   : Shape{d->batch, d->q_heads, d->q_len, d->v_head}});
  const int n = ctx.requested_outputs();
  if (n > 1) ctx.set_output(1, {t, {d->batch, d->kv_heads, d->total(), d->head}});
  if (n > 2) ctx.set_output(2, {t, {d->batch, d->kv_heads, d->total(), d->v_head}});
  if (n > 3) ctx.set_output(3, {t, {d->batch, d->q_heads, d->q_len, d->total()}});
  return absl::OkStatus();
}

// Element (b, h, s, e) of a 4-D [batch, heads, seq, size] view of a 3-D or 4-D input.
double at4(const Tensor& t, bool three_d, int64_t heads, int64_t b, int64_t h, int64_t s,
           int64_t e) {
  const Shape& sh = t.shape();
  if (three_d) {
    const int64_t size = sh[2] / heads;
    return t.get_as_double((b * sh[1] + s) * sh[2] + h * size + e);
  }
  return t.get_as_double(((b * sh[1] + h) * sh[2] + s) * sh[3] + e);
}

// Writes doubles into `out` in its dtype.
absl::Status store_all(Tensor& out, const std::vector<double>& v) {
  return dispatch_codec<kFloatTypes>(out.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* p = out.data<typename C::Storage>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = C::store(static_cast<typename C::Compute>(v[i]));
  });
}

// x rounded to dtype t.
double round_to(DType t, double x) {
  double out = x;
  [[maybe_unused]] absl::Status s = dispatch_codec<kFloatTypes>(t, [&](auto codec) {
    using C = decltype(codec);
    out = static_cast<double>(C::load(C::store(static_cast<typename C::Compute>(x))));
  });
  return out;
}

absl::Status attention_kernel(const KernelArgs& args) {
  const auto& a = args.get<AttentionAttrs>();
  auto given = [&](int i) { return static_cast<int>(args.inputs.size()) > i && !args.inputs[i].empty(); };
  std::vector<const Shape*> in(7, nullptr);
  for (int i = 0; i < 7; ++i)
    if (given(i)) in[i] = &args.inputs[i].shape();
  auto dd = dims_of(a, in);
  if (!dd.ok()) return dd.status();
  const Dims d = *dd;
  const Tensor& q = args.inputs[0];
  const int64_t T = d.total(), B = d.batch, Hq = d.q_heads, Hk = d.kv_heads, S = d.q_len;
  // Present keys and values: the cache, then the new ones.
  std::vector<double> key(B * Hk * T * d.head), value(B * Hk * T * d.v_head);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hk; ++h)
      for (int64_t j = 0; j < T; ++j) {
        const bool cached = j < d.past;
        for (int64_t e = 0; e < d.head; ++e)
          key[((b * Hk + h) * T + j) * d.head + e] =
              cached ? at4(args.inputs[4], false, Hk, b, h, j, e)
                     : at4(args.inputs[1], d.three_d, Hk, b, h, j - d.past, e);
        for (int64_t e = 0; e < d.v_head; ++e)
          value[((b * Hk + h) * T + j) * d.v_head + e] =
              cached ? at4(args.inputs[5], false, Hk, b, h, j, e)
                     : at4(args.inputs[2], d.three_d, Hk, b, h, j - d.past, e);
      }
  const DType t = q.dtype();
  auto rnd = [t](double x) { return round_to(t, x); };
  // ONNX scales Q and K by sqrt(scale) each, in the input type.
  const double root = rnd(std::sqrt(a.scale != 0.f ? a.scale
                                                   : 1.0 / std::sqrt(static_cast<double>(d.head))));
  std::vector<double> scaled_key(key.size());
  for (size_t i = 0; i < key.size(); ++i) scaled_key[i] = rnd(key[i] * root);
  // The softmax runs in softmax_precision (an ONNX element type) when given.
  DType soft = t;
  switch (a.softmax_precision) {
    case 1: soft = DType::f32; break;
    case 10: soft = DType::f16; break;
    case 11: soft = DType::f64; break;
    case 16: soft = DType::bf16; break;
    default: break;
  }
  auto srnd = [soft](double x) { return round_to(soft, x); };
  const Tensor* mask = given(3) ? &args.inputs[3] : nullptr;
  Shape mshape;
  std::vector<int64_t> mstride;
  if (mask) {
    mshape = mask->shape();
    mshape.insert(mshape.begin(), 4 - mshape.size(), 1);
    mstride = shape_strides(mshape);
  }
  std::vector<double> y(B * Hq * S * d.v_head), qk_out(B * Hq * S * T), scores(T), bias(T);
  for (int64_t b = 0; b < B; ++b) {
    // Where query 0 sits among the keys: after the cache, or (external cache) before the
    // sequence's last valid key.
    int64_t offset = d.past;
    if (given(6)) offset = args.inputs[6].get_as_int64(b) - S;
    const int64_t valid = given(6) ? args.inputs[6].get_as_int64(b) : T;
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t kh = h / (Hq / Hk);
      for (int64_t i = 0; i < S; ++i) {
        bool any = false;
        for (int64_t j = 0; j < T; ++j) {
          double s = 0;
          for (int64_t e = 0; e < d.head; ++e)
            s += rnd(at4(q, d.three_d, Hq, b, h, i, e) * root) *
                 scaled_key[((b * Hk + kh) * T + j) * d.head + e];
          s = rnd(s);
          if (a.softcap > 0.f) s = rnd(a.softcap * std::tanh(s / a.softcap));
          scores[j] = s;
          double m = 0;
          if (mask) {
            if (j >= mshape[3]) {
              m = kNegInf;
            } else {
              const int64_t at = (mshape[0] == 1 ? 0 : b) * mstride[0] +
                                 (mshape[1] == 1 ? 0 : h) * mstride[1] +
                                 (mshape[2] == 1 ? 0 : i) * mstride[2] + j;
              m = mask->dtype() == DType::boolean ? (mask->get_as_int64(at) ? 0.0 : kNegInf)
                                                  : mask->get_as_double(at);
            }
          }
          const int64_t diff = i + offset - j;
          if (a.is_causal && diff < 0) m = kNegInf;
          if (a.left_window_size >= 0 && diff > a.left_window_size) m = kNegInf;
          if (a.right_window_size >= 0 && -diff > a.right_window_size) m = kNegInf;
          if (j >= valid) m = kNegInf;
          bias[j] = m;
          any = any || m != kNegInf;
        }
        double* qk = &qk_out[((b * Hq + h) * S + i) * T];
        for (int64_t j = 0; j < T; ++j) qk[j] = scores[j];
        double top = kNegInf;
        for (int64_t j = 0; j < T; ++j) {
          scores[j] = rnd(scores[j] + bias[j]);
          qk[j] = a.qk_matmul_output_mode == 2 ? scores[j] : qk[j];
          top = std::max(top, scores[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < T; ++j) {
          scores[j] = (!any || top == kNegInf) ? 0.0 : srnd(std::exp(srnd(scores[j] - top)));
          // ONNX's reference sums f16 with a float accumulator and bf16 one rounded add at a
          // time; the expected outputs carry those roundings.
          sum = soft == DType::bf16 ? srnd(sum + scores[j]) : sum + scores[j];
        }
        sum = srnd(sum);
        for (int64_t j = 0; j < T; ++j) {
          if (sum > 0) scores[j] = rnd(srnd(scores[j] / sum));
          if (a.qk_matmul_output_mode == 3) qk[j] = scores[j];
        }
        for (int64_t e = 0; e < d.v_head; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < T; ++j)
            acc += scores[j] * value[((b * Hk + kh) * T + j) * d.v_head + e];
          const int64_t out = d.three_d ? (b * S + i) * Hq * d.v_head + h * d.v_head + e
                                        : ((b * Hq + h) * S + i) * d.v_head + e;
          y[out] = acc;
        }
      }
    }
  }
  if (absl::Status s = store_all(args.outputs[0], y); !s.ok()) return s;
  if (args.outputs.size() > 1)
    if (absl::Status s = store_all(args.outputs[1], key); !s.ok()) return s;
  if (args.outputs.size() > 2)
    if (absl::Status s = store_all(args.outputs[2], value); !s.ok()) return s;
  if (args.outputs.size() > 3)
    if (absl::Status s = store_all(args.outputs[3], qk_out); !s.ok()) return s;
  return absl::OkStatus();
}

}  // namespace

void register_attention_op(OpRegistry& r) {
  add_builtin_op(r, make_op<AttentionAttrs>("Attention", FusionKind::opaque, 3, 7,
                                            infer_attention, attention_kernel));
}

}  // namespace collage::ops
