// Reshape, Flatten, Squeeze and Unsqueeze: operators that change the shape and keep the data.
#include <cstring>
#include <set>

#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

// The element order never changes, so every kernel of this file is a plain copy. With an
// attribute from a run-time input (Squeeze's axes, Reshape's shape) the output was planned before
// the values were known: one of another size is an error, never a write past the buffer.
absl::Status run_copy(const KernelArgs& k) {
  if (k.outputs[0].bytes() != k.inputs[0].bytes())
    return absl::InvalidArgumentError(
        str_cat("the output was planned as ", shape_to_string(k.outputs[0].shape()), " but the "
                "input ", shape_to_string(k.inputs[0].shape()), " has another element count "
                "(values given at run time do not fit the input)"));
  std::memcpy(k.outputs[0].raw(), k.inputs[0].raw(), k.inputs[0].bytes());
  return absl::OkStatus();
}

absl::Status infer_reshape(InferContext& ctx) {
  const auto& a = ctx.attrs<ReshapeAttrs>();
  const TensorType& in = ctx.input(0);
  const int64_t total = in.numel();
  auto mismatch = [&] {
    // The requested shape as given: its -1 is the dimension to infer, not an unknown size.
    std::string requested;
    for (size_t i = 0; i < a.shape.size(); ++i)
      requested += str_cat(i ? "x" : "", a.shape[i]);
    return ctx.error(str_cat("cannot reshape ", shape_to_string(in.shape), " (", total,
                             " elements) to ", requested));
  };
  Shape out(a.shape.size());
  int inferred = -1;
  bool has_zero = false;
  int64_t known = 1;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    const int64_t v = a.shape[i];
    if (v == -1) {
      if (inferred >= 0)
        return ctx.error(str_cat("shape ", list_to_string(a.shape), " has more than one -1"));
      inferred = static_cast<int>(i);
      continue;
    }
    if (v < -1)
      return ctx.error(str_cat("shape ", list_to_string(a.shape), " has invalid entry ", v));
    if (v == 0 && !a.allowzero) {
      if (i >= in.shape.size())
        return ctx.error(str_cat("shape ", list_to_string(a.shape), " copies dimension ", i,
                                 " (0), but the input ", shape_to_string(in.shape), " has rank ",
                                 in.shape.size()));
      out[i] = in.shape[i];
    } else {
      out[i] = v;
      has_zero |= v == 0;
    }
    if (__builtin_mul_overflow(known, out[i], &known))
      return ctx.error(str_cat("shape ", list_to_string(a.shape), " has too many elements"));
  }
  if (inferred >= 0) {
    if (has_zero)
      return ctx.error(
          str_cat("shape ", list_to_string(a.shape), " has both -1 and 0 with allowzero=1"));
    if (known == 0 || total % known != 0) return mismatch();
    out[inferred] = total / known;
  } else if (known != total) {
    return mismatch();
  }
  ctx.set_output(0, {in.dtype, out});
  return absl::OkStatus();
}

absl::Status infer_flatten(InferContext& ctx) {
  const int64_t given = ctx.attrs<FlattenAttrs>().axis;
  const TensorType& in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  if (given < -rank || given > rank)
    return ctx.error(str_cat("axis ", given, " is out of range for rank ", rank,
                             " (allowed: ", -rank, "..", rank, ")"));
  const int64_t axis = given < 0 ? given + rank : given;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t& part = d < axis ? outer : inner;
    // An empty input may still have dimensions whose product overflows (a mutated model).
    if (__builtin_mul_overflow(part, in.shape[d], &part))
      return ctx.error(str_cat("the ", d < axis ? "outer" : "inner", " dimensions of ",
                               list_to_string(in.shape), " multiply past 2^63 - 1"));
  }
  ctx.set_output(0, {in.dtype, {outer, inner}});
  return absl::OkStatus();
}

absl::Status infer_squeeze(InferContext& ctx) {
  const auto& axes = ctx.attrs<SqueezeAttrs>().axes;
  const TensorType& in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  std::vector<bool> drop(in.shape.size(), false);
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) drop[d] = in.shape[d] == 1;
  }
  for (int64_t given : axes) {
    auto axis = normalize_axis(given, rank);
    if (!axis) return ctx.error(str_cat("axis ", given, " is out of range for rank ", rank));
    if (drop[*axis]) return ctx.error(str_cat("axis ", *axis, " is listed twice"));
    if (in.shape[*axis] != 1)
      return ctx.error(str_cat("cannot squeeze axis ", *axis, " of size ", in.shape[*axis],
                               " (input ", shape_to_string(in.shape), ")"));
    drop[*axis] = true;
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d]) out.push_back(in.shape[d]);
  ctx.set_output(0, {in.dtype, out});
  return absl::OkStatus();
}

absl::Status infer_unsqueeze(InferContext& ctx) {
  const auto& axes = ctx.attrs<UnsqueezeAttrs>().axes;
  const TensorType& in = ctx.input(0);
  const auto out_rank = static_cast<int64_t>(in.shape.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t given : axes) {
    auto axis = normalize_axis(given, out_rank);
    if (!axis)
      return ctx.error(str_cat("axis ", given, " is out of range for output rank ", out_rank));
    if (inserted[*axis]) return ctx.error(str_cat("axis ", *axis, " is listed twice"));
    inserted[*axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) out.push_back(inserted[d] ? 1 : in.shape[next++]);
  ctx.set_output(0, {in.dtype, out});
  return absl::OkStatus();
}

}  // namespace

void register_reshape_ops(OpRegistry& r) {
  add_tensor_op(
      r, make_op<ReshapeAttrs>("Reshape", FusionKind::injective, 1, 1, infer_reshape, run_copy));
  add_tensor_op(
      r, make_op<FlattenAttrs>("Flatten", FusionKind::injective, 1, 1, infer_flatten, run_copy));
  add_tensor_op(
      r, make_op<SqueezeAttrs>("Squeeze", FusionKind::injective, 1, 1, infer_squeeze, run_copy));
  add_tensor_op(r, make_op<UnsqueezeAttrs>("Unsqueeze", FusionKind::injective, 1, 1,
                                           infer_unsqueeze, run_copy));
}

}  // namespace collage::ops
