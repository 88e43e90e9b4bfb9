// Col2Im (ONNX 18) in the reference executor. image_shape and block_shape are inputs: the output
// shape is exact when image_shape is a compile-time constant and dynamic otherwise (the executor
// infers it again from the actual values); the block shape is checked when the kernel runs if it
// is not known before.
#include <cassert>
#include <cstring>

#include "collage/ops/geometry.h"
#include "dyn_geometry.h"
#include "ops/elementwise_common.h"
#include "ops/nn_window.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

// The sliding geometry of image `image` and block `block` under the attributes; an error names
// the inconsistency between it and the input's C * prod(block) x L.
absl::StatusOr<Window> col2im_window(const Col2ImAttrs& a, const Shape& input, const Shape& image,
                                     const Shape& block) {
  if (image.size() != block.size() || image.empty())
    return absl::InvalidArgumentError(str_cat("image_shape ", list_to_string(image),
                                              " and block_shape ", list_to_string(block),
                                              " must have the same, non-zero length"));
  auto win = resolve_window(image, block, {"NOTSET", a.strides, a.dilations, a.pads, false});
  if (!win.ok()) return win.status();
  const int64_t block_size = shape_numel(block), positions = shape_numel(win->out);
  if (block_size <= 0 || input[1] % block_size != 0 || input[2] != positions)
    return absl::InvalidArgumentError(
        str_cat("input ", list_to_string(input), " must be N x C * ", block_size, " x ",
                positions, " for block ", list_to_string(block), " sliding over ",
                list_to_string(image)));
  return win;
}

absl::Status infer_col2im(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kNumericTypes); !s.ok()) return s;
  const Shape& in = ctx.input(0).shape;
  if (in.size() != 3)
    return ctx.error(str_cat("input has shape ", shape_to_string(in), ", expected N x C*B x L"));
  for (int i : {1, 2})
    if (ctx.input(i).dtype != DType::i64 || ctx.input(i).shape.size() != 1)
      return ctx.error(str_cat(i == 1 ? "image_shape" : "block_shape", " is ",
                               type_to_string(ctx.input(i)), ", expected an i64 vector"));
  const int64_t r = ctx.input(1).shape[0];
  if (r < 1 || ctx.input(2).shape[0] != r)
    return ctx.error("image_shape and block_shape must have the same, non-zero length");
  const Tensor* image = ctx.constant(1);
  const Tensor* block = ctx.constant(2);
  Shape out = {in[0], kDynamicDim};
  for (int64_t i = 0; i < r; ++i) out.push_back(image ? image->get_as_int64(i) : kDynamicDim);
  if (image && block && in[1] != kDynamicDim && in[2] != kDynamicDim) {
    auto win = col2im_window(ctx.attrs<Col2ImAttrs>(), in, image->to_int64_vector(),
                             block->to_int64_vector());
    if (!win.ok()) return ctx.error(std::string(win.status().message()));
    out[1] = in[1] / shape_numel(block->to_int64_vector());
  } else if (block && in[1] != kDynamicDim) {
    const int64_t b = shape_numel(block->to_int64_vector());
    if (b > 0 && in[1] % b == 0) out[1] = in[1] / b;
  }
  if (image && !checked_shape_numel(Shape(out.begin() + 2, out.end())))
    return ctx.error(str_cat("image_shape ", list_to_string(image->to_int64_vector()),
                             " is invalid"));
  ctx.set_output(0, {ctx.input(0).dtype, out});
  return absl::OkStatus();
}

absl::Status run_col2im(const KernelArgs& k) {
  const Tensor& x = k.inputs[0];
  Tensor& y = k.outputs[0];
  const Shape image = k.inputs[1].to_int64_vector(), block = k.inputs[2].to_int64_vector();
  auto win = col2im_window(k.get<Col2ImAttrs>(), x.shape(), image, block);
  if (!win.ok()) return win.status();
  std::vector<rt_dynamic::Col2ImAxis> axes;
  for (size_t d = 0; d < image.size(); ++d)
    axes.push_back({image[d], block[d], win->out[d], win->stride[d], win->pad_begin[d],
                    win->dilation[d]});
  std::vector<double> acc(static_cast<size_t>(y.numel()), 0.0);
  rt_dynamic::col2im_accumulate(
      axes, x.shape()[0] * y.shape()[1], [&](int64_t i) { return x.get_as_double(i); }, acc);
  return dispatch_codec<kNumericTypes>(y.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* out = y.data<typename C::Storage>();
    for (size_t i = 0; i < acc.size(); ++i)
      out[i] = C::store(static_cast<typename C::Compute>(acc[i]));
  });
}

}  // namespace

void register_col2im_op(OpRegistry& r) {
  OpDef d = make_op<Col2ImAttrs>("Col2Im", FusionKind::opaque, 3, 3, infer_col2im, run_col2im);
  d.dynamic_shapes = true;
  [[maybe_unused]] absl::Status s = r.add(std::move(d));
  assert(s.ok());
}

}  // namespace collage::ops
