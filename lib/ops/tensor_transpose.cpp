// Transpose: permutes the axes of a tensor.
#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

// The permutation with negative entries normalised; empty perm reverses the axes. Error text
// when `perm` is not a permutation of the axes.
absl::StatusOr<std::vector<int64_t>> resolve_perm(const std::vector<int64_t>& perm, int64_t rank) {
  std::vector<int64_t> p(static_cast<size_t>(rank));
  if (perm.empty()) {
    for (int64_t i = 0; i < rank; ++i) p[i] = rank - 1 - i;
    return p;
  }
  auto bad = [&] {
    return absl::InvalidArgumentError(str_cat("perm ", list_to_string(perm),
                                              " is not a permutation of the ", rank,
                                              " axes of the input"));
  };
  if (static_cast<int64_t>(perm.size()) != rank) return bad();
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (int64_t i = 0; i < rank; ++i) {
    auto axis = normalize_axis(perm[i], rank);
    if (!axis || used[*axis]) return bad();
    used[*axis] = true;
    p[i] = *axis;
  }
  return p;
}

absl::Status infer_transpose(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  auto perm = resolve_perm(ctx.attrs<TransposeAttrs>().perm, static_cast<int64_t>(in.shape.size()));
  if (!perm.ok()) return ctx.error(std::string(perm.status().message()));
  Shape out(in.shape.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = in.shape[(*perm)[i]];
  ctx.set_output(0, {in.dtype, out});
  return absl::OkStatus();
}

absl::Status run_transpose(const KernelArgs& k) {
  const Tensor& in = k.inputs[0];
  Tensor& out = k.outputs[0];
  auto perm = resolve_perm(k.get<TransposeAttrs>().perm, in.rank());
  if (!perm.ok()) return perm.status();
  const std::vector<int64_t> in_strides = shape_strides(in.shape());
  StridedView src{std::vector<int64_t>(perm->size()), 0};
  for (size_t i = 0; i < perm->size(); ++i) src.strides[i] = in_strides[(*perm)[i]];
  copy_strided(out.shape(), dtype_size(in.dtype()), out.raw(), dense_view(out.shape()), in.raw(),
               src);
  return absl::OkStatus();
}

}  // namespace

void register_transpose_op(OpRegistry& r) {
  add_tensor_op(r, make_op<TransposeAttrs>("Transpose", FusionKind::injective, 1, 1,
                                           infer_transpose, run_transpose));
}

}  // namespace collage::ops
