// GatherElements (ONNX): picks one element of `data` along an axis for every element of `indices`.
#include "collage/ops/trees.h"
#include "core/str_cat.h"
#include "ops/elementwise_common.h"
#include "ops/tree_ops.h"

namespace collage::ops {
namespace {

absl::Status infer_gather_elements(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  if (indices.dtype != DType::i32 && indices.dtype != DType::i64)
    return ctx.error(str_cat("indices must be i32 or i64, got ", dtype_name(indices.dtype)));
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) return ctx.error("data must have rank >= 1, got a scalar");
  if (static_cast<int64_t>(indices.shape.size()) != rank)
    return ctx.error(str_cat("indices ", type_to_string(indices), " must have the rank of data ",
                             type_to_string(data)));
  const int64_t given = ctx.attrs<GatherElementsAttrs>().axis;
  auto axis = normalize_axis(given, rank);
  if (!axis) return ctx.error(str_cat("axis ", given, " is out of range for rank ", rank));
  // A dimension known only at run time is checked when the node runs (the reference executor
  // infers its types again from the actual shapes).
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && indices.shape[d] != kDynamicDim && data.shape[d] != kDynamicDim &&
        indices.shape[d] > data.shape[d])
      return ctx.error(str_cat("indices ", type_to_string(indices), " is larger than data ",
                               type_to_string(data), " on axis ", d));
  ctx.set_output(0, {data.dtype, indices.shape});
  return absl::OkStatus();
}

template <typename I>
absl::Status gather_elements(const Tensor& data, const Tensor& indices, int64_t axis, Tensor& out) {
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  const auto rank = static_cast<int64_t>(ds.size());
  const std::vector<int64_t> dstride = shape_strides(ds);
  const int64_t dim = ds[axis];
  const size_t esize = dtype_size(data.dtype());
  const I* idx = indices.data<I>();
  const int64_t n = indices.numel();
  // The output walks `indices` in row-major order; `base` is the data offset of the current
  // element with the gathered axis at 0, updated as the multi-index advances.
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  int64_t base = 0;
  for (int64_t o = 0; o < n; ++o) {
    int64_t v = static_cast<int64_t>(idx[o]);
    if (v < -dim || v >= dim)
      return absl::InvalidArgumentError(str_cat("GatherElements: index ", v, " (indices element ",
                                                o, ") is out of range for axis ", axis, " of size ",
                                                dim));
    if (v < 0) v += dim;
    copy_element(out.raw(), o, data.raw(), base + v * dstride[axis], esize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d != axis) base += dstride[d];
      if (++pos[d] < is[d]) break;
      if (d != axis) base -= dstride[d] * is[d];
      pos[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status run_gather_elements(const KernelArgs& k) {
  const Tensor& data = k.inputs[0];
  const Tensor& indices = k.inputs[1];
  const int64_t axis = *normalize_axis(k.get<GatherElementsAttrs>().axis, data.rank());
  if (indices.dtype() == DType::i64)
    return gather_elements<int64_t>(data, indices, axis, k.outputs[0]);
  return gather_elements<int32_t>(data, indices, axis, k.outputs[0]);
}

}  // namespace

void register_gather_elements_op(OpRegistry& r) {
  OpDef d = make_op<GatherElementsAttrs>("GatherElements", FusionKind::injective, 2, 2,
                                         infer_gather_elements, run_gather_elements);
  // Its inference takes dynamic dimensions as they are: probed with a stand-in size, indices
  // of a data-dependent size would seem larger than the data.
  d.dynamic_shapes = true;
  add_builtin_op(r, std::move(d));
}

}  // namespace collage::ops
