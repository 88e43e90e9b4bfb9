// TopK (ONNX 1, 10, 11, 24): the k largest or smallest elements along one axis and their indices.
#include <utility>

#include "collage/ops/sorting.h"
#include "core/str_cat.h"
#include "dyn_top_k.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

absl::Status infer_topk(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 2); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kNumericTypes); !s.ok()) return s;
  const auto& a = ctx.attrs<TopKAttrs>();
  const TensorType& x = ctx.input(0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return ctx.error("X must have rank >= 1, got a scalar");
  auto axis = normalize_axis(a.axis, rank);
  if (!axis) return ctx.error(str_cat("axis ", a.axis, " is out of range for rank ", rank));
  if (a.k.size() != 1)
    return ctx.error(str_cat("K must hold one value, it holds ", a.k.size()));
  const int64_t k = a.k[0];
  if (k < 0 || k > x.shape[*axis])
    return ctx.error(str_cat("k = ", k, " is outside [0, ", x.shape[*axis], "] (axis ", *axis,
                             " of ", type_to_string(x), ")"));
  Shape out = x.shape;
  out[*axis] = k;
  ctx.set_output(0, {x.dtype, out});
  ctx.set_output(1, {DType::i64, out});
  return absl::OkStatus();
}

// With k computed at run time only the length of the selected axis is unknown.
absl::Status infer_topk_unknown(InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  const auto& a = ctx.attrs<TopKAttrs>();
  auto axis = normalize_axis(a.axis, rank);
  if (rank == 0 || !axis)
    return ctx.error(str_cat("axis ", a.axis, " is out of range for rank ", rank));
  Shape out = x.shape;
  out[*axis] = kDynamicDim;
  ctx.set_output(0, {x.dtype, out});
  ctx.set_output(1, {DType::i64, out});
  return absl::OkStatus();
}

absl::Status run_topk(const KernelArgs& args) {
  const auto& a = args.get<TopKAttrs>();
  const Tensor& x = args.inputs[0];
  const int64_t axis = *normalize_axis(a.axis, x.rank());
  const int64_t k = a.k[0];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  const int64_t len = x.shape()[axis];
  int64_t* indices = args.outputs[1].data<int64_t>();
  return dispatch_codec<kNumericTypes>(x.dtype(), [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::Compute;
    const auto* in = x.data<typename C::Storage>();
    auto* values = args.outputs[0].data<typename C::Storage>();
    std::vector<T> row(static_cast<size_t>(len));
    std::vector<int64_t> order;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const auto* src = in + o * len * inner + i;
        for (int64_t j = 0; j < len; ++j) row[j] = C::load(src[j * inner]);
        rt_dynamic::top_k_order(row, k, a.largest, order);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (o * k + j) * inner + i;
          values[at] = C::store(row[order[j]]);
          indices[at] = order[j];
        }
      }
    }
  });
}

}  // namespace

void register_topk_op(OpRegistry& r) {
  OpDef def = make_op<TopKAttrs>("TopK", FusionKind::opaque, 1, 1, infer_topk, run_topk);
  def.attr_inputs = {{"k", AttrInput::Kind::ints}};
  def.infer_unknown = infer_topk_unknown;
  add_builtin_op(r, std::move(def));
}

}  // namespace collage::ops
