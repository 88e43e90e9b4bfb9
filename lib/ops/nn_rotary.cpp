// RotaryEmbedding (ONNX 23) in the reference executor, computed in double.
#include "collage/ops/attention.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

// [batch, seq, heads, head size] of X.
struct RotaryDims {
  int64_t batch = 0, seq = 0, heads = 0, head = 0, rotary = 0;
};

absl::StatusOr<RotaryDims> rotary_dims(const RotaryEmbeddingAttrs& a, const Shape& x) {
  RotaryDims d;
  if (x.size() == 4) {
    d.batch = x[0], d.heads = x[1], d.seq = x[2], d.head = x[3];
  } else if (x.size() == 3) {
    if (a.num_heads < 1 || x[2] % a.num_heads)
      return absl::InvalidArgumentError("a 3-D input needs num_heads dividing its last axis");
    d.batch = x[0], d.seq = x[1], d.heads = a.num_heads, d.head = x[2] / a.num_heads;
  } else {
    return absl::InvalidArgumentError("input must be 3-D or 4-D");
  }
  d.rotary = a.rotary_embedding_dim > 0 ? a.rotary_embedding_dim : d.head;
  if (d.rotary > d.head || d.rotary % 2)
    return absl::InvalidArgumentError("rotary_embedding_dim must be even and at most the head size");
  return d;
}

absl::Status infer_rotary(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  for (int i : {0, 1, 2})
    if (absl::Status s = check_dtype(ctx, i, kFloatTypes); !s.ok()) return s;
  auto d = rotary_dims(ctx.attrs<RotaryEmbeddingAttrs>(), ctx.input(0).shape);
  if (!d.ok()) return ctx.error(str_cat(d.status().message()));
  const Shape want = ctx.has_input(3) ? Shape{-1, d->rotary / 2} : Shape{d->batch, d->seq, d->rotary / 2};
  for (int i : {1, 2}) {
    const Shape& c = ctx.input(i).shape;
    bool ok = c.size() == want.size();
    for (size_t k = 0; ok && k < c.size(); ++k) ok = want[k] < 0 || c[k] == want[k];
    if (!ok)
      return ctx.error(str_cat(i == 1 ? "cos_cache" : "sin_cache", " has shape ",
                               shape_to_string(c), ", expected ",
                               ctx.has_input(3) ? "[positions, rotary/2]" : "[batch, seq, rotary/2]"));
  }
  if (ctx.has_input(3) && (ctx.input(3).shape != Shape{d->batch, d->seq} ||
                           !in_set(type_bit(DType::i64), ctx.input(3).dtype)))
    return ctx.error("position_ids must be i64 [batch, seq]");
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status rotary_kernel(const KernelArgs& args) {
  const auto& a = args.get<RotaryEmbeddingAttrs>();
  const Tensor& x = args.inputs[0];
  auto dd = rotary_dims(a, x.shape());
  if (!dd.ok()) return dd.status();
  const RotaryDims d = *dd;
  const bool positions = args.inputs.size() > 3 && !args.inputs[3].empty();
  const int64_t half = d.rotary / 2;
  const bool four_d = x.rank() == 4;
  std::vector<double> out(static_cast<size_t>(x.numel()));
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t s = 0; s < d.seq; ++s) {
      int64_t row = b * d.seq + s;
      if (positions) {
        row = args.inputs[3].get_as_int64(b * d.seq + s);
        if (row < 0 || row >= args.inputs[1].shape()[0])
          return absl::InvalidArgumentError(str_cat("position ", row, " is outside the caches"));
      }
      for (int64_t h = 0; h < d.heads; ++h) {
        const int64_t base = four_d ? ((b * d.heads + h) * d.seq + s) * d.head
                                    : (b * d.seq + s) * d.heads * d.head + h * d.head;
        for (int64_t e = d.rotary; e < d.head; ++e) out[base + e] = x.get_as_double(base + e);
        for (int64_t i = 0; i < half; ++i) {
          const double c = args.inputs[1].get_as_double(row * half + i);
          const double sn = args.inputs[2].get_as_double(row * half + i);
          const int64_t i1 = a.interleaved ? 2 * i : i, i2 = a.interleaved ? 2 * i + 1 : i + half;
          const double x1 = x.get_as_double(base + i1), x2 = x.get_as_double(base + i2);
          out[base + i1] = c * x1 - sn * x2;
          out[base + i2] = sn * x1 + c * x2;
        }
      }
    }
  return dispatch_codec<kFloatTypes>(x.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* y = args.outputs[0].data<typename C::Storage>();
    for (size_t i = 0; i < out.size(); ++i) y[i] = C::store(static_cast<typename C::Compute>(out[i]));
  });
}

}  // namespace

void register_rotary_embedding_op(OpRegistry& r) {
  add_builtin_op(r, make_op<RotaryEmbeddingAttrs>("RotaryEmbedding", FusionKind::opaque, 3, 4,
                                                  infer_rotary, rotary_kernel));
}

}  // namespace collage::ops
