// Expand (numpy broadcasting to a shape) and Tile (repetition along each axis).
#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

absl::Status infer_expand(InferContext& ctx) {
  const auto& shape = ctx.attrs<ExpandAttrs>().shape;
  const TensorType& in = ctx.input(0);
  for (int64_t d : shape)
    if (d < 0) return ctx.error(str_cat("shape ", list_to_string(shape), " has a negative entry"));
  auto out = broadcast_shapes(in.shape, shape);
  if (!out)
    return ctx.error(str_cat("cannot broadcast input ", shape_to_string(in.shape), " with shape ",
                             list_to_string(shape)));
  ctx.set_output(0, {in.dtype, *out});
  return absl::OkStatus();
}

absl::Status run_expand(const KernelArgs& k) {
  const Tensor& in = k.inputs[0];
  Tensor& out = k.outputs[0];
  copy_strided(out.shape(), dtype_size(in.dtype()), out.raw(), dense_view(out.shape()), in.raw(),
               {broadcast_strides(in.shape(), out.shape()), 0});
  return absl::OkStatus();
}

absl::Status infer_tile(InferContext& ctx) {
  const auto& repeats = ctx.attrs<TileAttrs>().repeats;
  const TensorType& in = ctx.input(0);
  if (repeats.size() != in.shape.size())
    return ctx.error(str_cat("repeats ", list_to_string(repeats), " has ", repeats.size(),
                             " entries, but the input ", shape_to_string(in.shape), " has rank ",
                             in.shape.size()));
  Shape out(in.shape.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 0)
      return ctx.error(str_cat("repeats ", list_to_string(repeats), " has a negative entry"));
    if (__builtin_mul_overflow(in.shape[d], repeats[d], &out[d]))
      return ctx.error(str_cat("repeats ", list_to_string(repeats), " times the input ",
                               shape_to_string(in.shape), " overflows axis ", d));
  }
  ctx.set_output(0, {in.dtype, out});
  return absl::OkStatus();
}

// Output axis d of size repeats[d] * dims[d] is read as two axes [repeats[d], dims[d]]: the outer
// one does not move in the input (stride 0), the inner one walks it.
absl::Status run_tile(const KernelArgs& k) {
  const Tensor& in = k.inputs[0];
  Tensor& out = k.outputs[0];
  const auto& repeats = k.get<TileAttrs>().repeats;
  const std::vector<int64_t> in_strides = shape_strides(in.shape());
  Shape split;
  StridedView src;
  for (size_t d = 0; d < in.shape().size(); ++d) {
    split.push_back(repeats[d]);
    split.push_back(in.shape()[d]);
    src.strides.push_back(0);
    src.strides.push_back(in_strides[d]);
  }
  copy_strided(split, dtype_size(in.dtype()), out.raw(), dense_view(split), in.raw(), src);
  return absl::OkStatus();
}

}  // namespace

void register_expand_tile_ops(OpRegistry& r) {
  add_tensor_op(
      r, make_op<ExpandAttrs>("Expand", FusionKind::injective, 1, 1, infer_expand, run_expand));
  add_tensor_op(r, make_op<TileAttrs>("Tile", FusionKind::injective, 1, 1, infer_tile, run_tile));
}

}  // namespace collage::ops
