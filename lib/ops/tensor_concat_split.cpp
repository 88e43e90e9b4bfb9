// Concat and Split: joining tensors along an axis and cutting one apart.
#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

absl::Status infer_concat(InferContext& ctx) {
  const auto& a = ctx.attrs<ConcatAttrs>();
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.error(str_cat("input ", i, " is missing"));
  const TensorType& first = ctx.input(0);
  const auto rank = static_cast<int64_t>(first.shape.size());
  if (rank == 0) return ctx.error("cannot concatenate scalars (input 0 has rank 0)");
  auto axis = normalize_axis(a.axis, rank);
  if (!axis) return ctx.error(str_cat("axis ", a.axis, " is out of range for rank ", rank));
  Shape out = first.shape;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    if (t.dtype != first.dtype)
      return ctx.error(str_cat("input ", i, " has dtype ", dtype_name(t.dtype), ", expected ",
                               dtype_name(first.dtype)));
    if (static_cast<int64_t>(t.shape.size()) != rank)
      return ctx.error(str_cat("input ", i, " has rank ", t.shape.size(), ", expected ", rank));
    for (int64_t d = 0; d < rank; ++d) {
      if (d != *axis && t.shape[d] != first.shape[d])
        return ctx.error(str_cat("input ", i, " has shape ", shape_to_string(t.shape),
                                 ", which differs from input 0 (", shape_to_string(first.shape),
                                 ") outside axis ", *axis));
    }
    out[*axis] += t.shape[*axis];
  }
  ctx.set_output(0, {first.dtype, out});
  return absl::OkStatus();
}

absl::Status run_concat(const KernelArgs& k) {
  Tensor& out = k.outputs[0];
  const int64_t axis = *normalize_axis(k.get<ConcatAttrs>().axis, out.rank());
  StridedView dst = dense_view(out.shape());
  const size_t esize = dtype_size(out.dtype());
  for (const Tensor& in : k.inputs) {
    copy_strided(in.shape(), esize, out.raw(), dst, in.raw(), dense_view(in.shape()));
    dst.offset += in.shape()[axis] * dst.strides[axis];
  }
  return absl::OkStatus();
}

absl::Status infer_split(InferContext& ctx) {
  const auto& a = ctx.attrs<SplitAttrs>();
  const TensorType& in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  auto axis = normalize_axis(a.axis, rank);
  if (!axis) return ctx.error(str_cat("axis ", a.axis, " is out of range for rank ", rank));
  const int64_t dim = in.shape[*axis];
  std::vector<int64_t> sizes = a.split;
  const int requested = ctx.requested_outputs();
  if (!sizes.empty()) {
    if (requested >= 0 && requested != static_cast<int>(sizes.size()))
      return ctx.error(str_cat("split ", list_to_string(sizes), " has ", sizes.size(),
                               " entries but ", requested, " outputs are requested"));
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) return ctx.error(str_cat("split ", list_to_string(sizes), " has a negative size"));
      sum += s;
    }
    if (sum != dim)
      return ctx.error(str_cat("split ", list_to_string(sizes), " sums to ", sum, ", but axis ",
                               *axis, " has size ", dim));
  } else {
    if (requested <= 0)
      return ctx.error("the number of pieces is unknown: give 'split' or request outputs");
    const int64_t chunk = (dim + requested - 1) / requested;
    const int64_t last = dim - chunk * (requested - 1);
    if (last < 0)
      return ctx.error(str_cat("cannot split axis ", *axis, " of size ", dim, " into ", requested,
                               " pieces of ", chunk));
    sizes.assign(requested, chunk);
    sizes.back() = last;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape s = in.shape;
    s[*axis] = sizes[i];
    ctx.set_output(static_cast<int>(i), {in.dtype, s});
  }
  return absl::OkStatus();
}

absl::Status run_split(const KernelArgs& k) {
  const Tensor& in = k.inputs[0];
  const int64_t axis = *normalize_axis(k.get<SplitAttrs>().axis, in.rank());
  StridedView src = dense_view(in.shape());
  const size_t esize = dtype_size(in.dtype());
  for (Tensor& out : k.outputs) {
    copy_strided(out.shape(), esize, out.raw(), dense_view(out.shape()), in.raw(), src);
    src.offset += out.shape()[axis] * src.strides[axis];
  }
  return absl::OkStatus();
}

}  // namespace

void register_concat_split_ops(OpRegistry& r) {
  add_tensor_op(
      r, make_op<ConcatAttrs>("Concat", FusionKind::injective, 1, -1, infer_concat, run_concat));
  add_tensor_op(r,
                make_op<SplitAttrs>("Split", FusionKind::injective, 1, 1, infer_split, run_split));
}

}  // namespace collage::ops
