// Which built-in operators take attributes from run-time inputs (ONNX's shape-like inputs), and
// the outputs' types while those values are unknown (the rank; every dimension they decide is
// kDynamicDim). The wrapping itself is lib/ir/attr_inputs.cpp.
#include <string_view>

#include "collage/ops/elementwise.h"
#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

using Kind = AttrInput::Kind;

// The number of values a rank-0 or rank-1 input holds, or nullopt when that is itself unknown.
std::optional<int64_t> length_of(const TensorType& t) {
  if (t.shape.empty()) return 1;
  if (t.shape[0] == kDynamicDim) return std::nullopt;
  return t.shape[0];
}

absl::Status set_unknown(InferContext& ctx, DType dtype, std::optional<int64_t> rank) {
  if (!rank || *rank < 0)
    return ctx.error(str_cat("the rank of the output depends on the length of input ",
                             ctx.num_inputs() - 1, ", which is known only at run time"));
  ctx.set_output(0, {dtype, Shape(static_cast<size_t>(*rank), kDynamicDim)});
  return absl::OkStatus();
}

// ReduceX with run-time axes: the rank stays with keepdims; without, it drops by the number of
// axes (all of them for an empty list, none with noop_with_empty_axes).
absl::Status reduce_unknown(InferContext& ctx) {
  const auto& a = ctx.attrs<ReduceAttrs>();
  const auto rank = static_cast<int64_t>(ctx.input(0).shape.size());
  if (a.keepdims) return set_unknown(ctx, ctx.input(0).dtype, rank);
  auto k = length_of(ctx.input(1));
  if (k && *k == 0) k = a.noop_with_empty_axes ? 0 : rank;
  return set_unknown(ctx, ctx.input(0).dtype, k ? std::optional(rank - *k) : std::nullopt);
}

// Squeeze's axes from an input: the rank drops by their number (an empty list squeezes every
// size-1 dimension: the rank then depends on the shape, known only when it has no 1).
absl::Status squeeze_unknown(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  auto k = length_of(ctx.input(1));
  if (k && *k == 0) {
    int64_t ones = 0;
    for (int64_t d : in) ones += d == 1;
    k = ones;
  }
  const auto rank = static_cast<int64_t>(in.size());
  return set_unknown(ctx, ctx.input(0).dtype, k ? std::optional(rank - *k) : std::nullopt);
}

absl::Status unsqueeze_unknown(InferContext& ctx) {
  auto k = length_of(ctx.input(1));
  const auto rank = static_cast<int64_t>(ctx.input(0).shape.size());
  return set_unknown(ctx, ctx.input(0).dtype, k ? std::optional(rank + *k) : std::nullopt);
}

// Reshape's and ConstantOfShape's rank is the length of the shape given.
absl::Status reshape_unknown(InferContext& ctx) {
  return set_unknown(ctx, ctx.input(0).dtype, length_of(ctx.input(1)));
}

absl::Status constant_of_shape_unknown(InferContext& ctx) {
  const Tensor& value = ctx.attrs<ConstantOfShapeAttrs>().value;
  const DType dtype = value.empty() ? DType::f32 : value.dtype();
  return set_unknown(ctx, dtype, length_of(ctx.input(0)));
}

// Expand broadcasts the input against the shape given: the larger of the two ranks.
absl::Status expand_unknown(InferContext& ctx) {
  auto k = length_of(ctx.input(1));
  const auto rank = static_cast<int64_t>(ctx.input(0).shape.size());
  return set_unknown(ctx, ctx.input(0).dtype, k ? std::optional(std::max(rank, *k)) : k);
}

// Dropout's ratio and training_mode decide no shape: the output is the input, the mask its shape.
absl::Status dropout_unknown(InferContext& ctx) {
  ctx.set_output(0, ctx.input(0));
  if (ctx.requested_outputs() == 2) ctx.set_output(1, {DType::boolean, ctx.input(0).shape});
  return absl::OkStatus();
}

}  // namespace

void declare_attr_inputs(OpDef& def) {
  const std::string_view name = def.name;
  if (name.substr(0, 6) == "Reduce") {
    def.attr_inputs = {{"axes", Kind::ints}};
    def.infer_unknown = reduce_unknown;
  } else if (name == "Squeeze") {
    def.attr_inputs = {{"axes", Kind::ints}};
    def.infer_unknown = squeeze_unknown;
  } else if (name == "Unsqueeze") {
    def.attr_inputs = {{"axes", Kind::ints}};
    def.infer_unknown = unsqueeze_unknown;
  } else if (name == "Reshape") {
    def.attr_inputs = {{"shape", Kind::ints}};
    def.infer_unknown = reshape_unknown;
  } else if (name == "Expand") {
    def.attr_inputs = {{"shape", Kind::ints}};
    def.infer_unknown = expand_unknown;
  } else if (name == "ConstantOfShape") {
    def.attr_inputs = {{"shape", Kind::ints}};
    def.infer_unknown = constant_of_shape_unknown;
  } else if (name == "Tile") {
    def.attr_inputs = {{"repeats", Kind::ints}};
  } else if (name == "Split") {
    def.attr_inputs = {{"split", Kind::ints}};
  } else if (name == "Slice") {
    def.attr_inputs = {{"starts", Kind::ints}, {"ends", Kind::ints}, {"axes", Kind::ints},
                       {"steps", Kind::ints}};
  } else if (name == "Pad") {
    def.attr_inputs = {{"pads", Kind::ints}, {"value", Kind::scalar}, {"axes", Kind::ints}};
  } else if (name == "Dropout") {
    def.attr_inputs = {{"ratio", Kind::scalar}, {"training_mode", Kind::scalar}};
    def.infer_unknown = dropout_unknown;
  } else if (name == "Resize") {
    def.attr_inputs = {{"roi", Kind::floats}, {"scales", Kind::floats}, {"sizes", Kind::ints}};
  }
}

}  // namespace collage::ops
