// ArgMax and ArgMin (ONNX): the index of the largest (smallest) element along one axis, as i64.
#include "collage/ops/trees.h"
#include "core/str_cat.h"
#include "ops/elementwise_common.h"
#include "ops/tree_ops.h"

namespace collage::ops {
namespace {

absl::Status infer_argmax(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kNumericTypes); !s.ok()) return s;
  const auto& a = ctx.attrs<ArgMaxAttrs>();
  const TensorType& in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  if (rank == 0) return ctx.error("data must have rank >= 1, got a scalar");
  auto axis = normalize_axis(a.axis, rank);
  if (!axis) return ctx.error(str_cat("axis ", a.axis, " is out of range for rank ", rank));
  if (in.shape[*axis] == 0)
    return ctx.error(str_cat("axis ", *axis, " of ", type_to_string(in), " is empty"));
  Shape out = in.shape;
  if (a.keepdims)
    out[*axis] = 1;
  else
    out.erase(out.begin() + *axis);
  ctx.set_output(0, {DType::i64, out});
  return absl::OkStatus();
}

template <bool kMax>
absl::Status run_arg(const KernelArgs& k) {
  const auto& a = k.get<ArgMaxAttrs>();
  const Tensor& in = k.inputs[0];
  const int64_t axis = *normalize_axis(a.axis, in.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in.shape()[d];
  for (int64_t d = axis + 1; d < in.rank(); ++d) inner *= in.shape()[d];
  const int64_t len = in.shape()[axis];
  int64_t* out = k.outputs[0].data<int64_t>();
  const bool last = a.select_last_index != 0;
  return dispatch_codec<kNumericTypes>(in.dtype(), [&](auto codec) {
    using C = decltype(codec);
    const auto* x = in.data<typename C::Storage>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const auto* row = x + o * len * inner + i;
        auto best = C::load(row[0]);
        int64_t at = 0;
        for (int64_t j = 1; j < len; ++j) {
          const auto v = C::load(row[j * inner]);
          if ((kMax ? v > best : v < best) || (last && v == best)) {
            best = v;
            at = j;
          }
        }
        out[o * inner + i] = at;
      }
    }
  });
}

}  // namespace

void register_argmax_op(OpRegistry& r) {
  add_builtin_op(
      r, make_op<ArgMaxAttrs>("ArgMax", FusionKind::reduction, 1, 1, infer_argmax, run_arg<true>));
  add_builtin_op(
      r, make_op<ArgMaxAttrs>("ArgMin", FusionKind::reduction, 1, 1, infer_argmax, run_arg<false>));
}

}  // namespace collage::ops
