// Slice (ONNX clamping, negative steps) and Gather (indices along one axis).
#include <algorithm>
#include <cstring>
#include <set>

#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

// Where a slice reads: the output shape and the strided view of the input it copies.
struct SlicePlan {
  Shape shape;
  StridedView src;
};

absl::StatusOr<SlicePlan> plan_slice(const SliceAttrs& a, const Shape& in) {
  const auto rank = static_cast<int64_t>(in.size());
  const size_t n = a.starts.size();
  if (a.ends.size() != n)
    return absl::InvalidArgumentError(
        str_cat("starts has ", n, " entries but ends has ", a.ends.size()));
  if (!a.axes.empty() && a.axes.size() != n)
    return absl::InvalidArgumentError(
        str_cat("axes has ", a.axes.size(), " entries but starts has ", n));
  if (!a.steps.empty() && a.steps.size() != n)
    return absl::InvalidArgumentError(
        str_cat("steps has ", a.steps.size(), " entries but starts has ", n));
  if (a.axes.empty() && static_cast<int64_t>(n) > rank)
    return absl::InvalidArgumentError(
        str_cat("starts has ", n, " entries but the input has rank ", rank));
  const std::vector<int64_t> in_strides = shape_strides(in);
  SlicePlan p{in, {in_strides, 0}};
  std::set<int64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    const int64_t given = a.axes.empty() ? static_cast<int64_t>(i) : a.axes[i];
    auto axis = normalize_axis(given, rank);
    if (!axis)
      return absl::InvalidArgumentError(
          str_cat("axis ", given, " is out of range for rank ", rank));
    if (!seen.insert(*axis).second)
      return absl::InvalidArgumentError(str_cat("axis ", *axis, " is sliced twice"));
    const int64_t step = a.steps.empty() ? 1 : a.steps[i];
    if (step == 0) return absl::InvalidArgumentError(str_cat("step for axis ", *axis, " is 0"));
    const int64_t dim = in[*axis];
    int64_t start = a.starts[i], end = a.ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t len = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start)
        len = 1 + static_cast<int64_t>(static_cast<uint64_t>(end - start - 1) /
                                       static_cast<uint64_t>(step));
    } else if (dim > 0) {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      const uint64_t back = uint64_t{0} - static_cast<uint64_t>(step);
      if (start > end)
        len = 1 + static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / back);
    }
    p.shape[*axis] = len;
    if (len > 0) p.src.offset += start * in_strides[*axis];
    // A stride is only used to move between elements, so an axis of length <= 1 needs none (and a
    // huge step times the stride could overflow).
    p.src.strides[*axis] = len > 1 ? step * in_strides[*axis] : 0;
  }
  return p;
}

absl::Status infer_slice(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  auto p = plan_slice(ctx.attrs<SliceAttrs>(), in.shape);
  if (!p.ok()) return ctx.error(std::string(p.status().message()));
  ctx.set_output(0, {in.dtype, p->shape});
  return absl::OkStatus();
}

absl::Status run_slice(const KernelArgs& k) {
  const Tensor& in = k.inputs[0];
  Tensor& out = k.outputs[0];
  auto p = plan_slice(k.get<SliceAttrs>(), in.shape());
  if (!p.ok()) return p.status();
  copy_strided(p->shape, dtype_size(in.dtype()), out.raw(), dense_view(out.shape()), in.raw(),
               p->src);
  return absl::OkStatus();
}

absl::Status infer_gather(InferContext& ctx) {
  const auto& a = ctx.attrs<GatherAttrs>();
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  if (indices.dtype != DType::i32 && indices.dtype != DType::i64)
    return ctx.error(str_cat("indices must be i32 or i64, got ", dtype_name(indices.dtype)));
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) return ctx.error("data must have rank >= 1, got a scalar");
  auto axis = normalize_axis(a.axis, rank);
  if (!axis) return ctx.error(str_cat("axis ", a.axis, " is out of range for rank ", rank));
  Shape out(data.shape.begin(), data.shape.begin() + *axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + *axis + 1, data.shape.end());
  ctx.set_output(0, {data.dtype, out});
  return absl::OkStatus();
}

absl::Status run_gather(const KernelArgs& k) {
  const Tensor& data = k.inputs[0];
  const Tensor& indices = k.inputs[1];
  Tensor& out = k.outputs[0];
  const int64_t axis = *normalize_axis(k.get<GatherAttrs>().axis, data.rank());
  const int64_t dim = data.shape()[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape()[d];
  for (int64_t d = axis + 1; d < data.rank(); ++d) inner *= data.shape()[d];
  const int64_t count = indices.numel();
  std::vector<int64_t> idx(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    int64_t v =
        indices.dtype() == DType::i64 ? indices.data<int64_t>()[j] : indices.data<int32_t>()[j];
    if (v < -dim || v >= dim)
      return absl::InvalidArgumentError(str_cat("index ", v, " (indices element ", j,
                                                ") is out of range for axis ", axis, " of size ",
                                                dim));
    idx[j] = v < 0 ? v + dim : v;
  }
  const size_t row = static_cast<size_t>(inner) * dtype_size(data.dtype());
  auto* dst = static_cast<unsigned char*>(out.raw());
  const auto* src = static_cast<const unsigned char*>(data.raw());
  for (int64_t o = 0; o < outer; ++o) {
    const unsigned char* block = src + static_cast<size_t>(o * dim) * row;
    for (int64_t j = 0; j < count; ++j, dst += row)
      std::memcpy(dst, block + static_cast<size_t>(idx[j]) * row, row);
  }
  return absl::OkStatus();
}

}  // namespace

void register_slice_gather_ops(OpRegistry& r) {
  add_tensor_op(r,
                make_op<SliceAttrs>("Slice", FusionKind::injective, 1, 1, infer_slice, run_slice));
  add_tensor_op(
      r, make_op<GatherAttrs>("Gather", FusionKind::injective, 2, 2, infer_gather, run_gather));
}

}  // namespace collage::ops
