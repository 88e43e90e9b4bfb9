// MaxUnpool: MaxPool's values put back where its Indices say, zeros elsewhere. With an
// output_shape computed at run time the spatial sizes are dynamic until the executor sees it.
#include <cassert>
#include <cstring>

#include "collage/ops/pooling.h"
#include "ops/elementwise_common.h"
#include "ops/nn_ops.h"

namespace collage::ops {
namespace {

absl::Status infer_max_unpool(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kNumericTypes); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 1, type_bit(DType::i64)); !s.ok()) return s;
  const auto& a = ctx.attrs<MaxUnpoolAttrs>();
  const Shape& x = ctx.input(0).shape;
  const auto r = static_cast<int64_t>(x.size()) - 2;
  if (r < 1 || r > 3)
    return ctx.error(str_cat("X has shape ", shape_to_string(x), ", expected N x C x 1-3 "
                             "spatial axes"));
  if (ctx.input(1).shape != x)
    return ctx.error(str_cat("I has shape ", shape_to_string(ctx.input(1).shape),
                             ", X has ", shape_to_string(x), "; they must match"));
  if (static_cast<int64_t>(a.kernel_shape.size()) != r ||
      (!a.strides.empty() && static_cast<int64_t>(a.strides.size()) != r) ||
      (!a.pads.empty() && static_cast<int64_t>(a.pads.size()) != 2 * r))
    return ctx.error(str_cat("kernel_shape, strides and pads must have ", r, ", ", r, " and ",
                             2 * r, " values"));
  Shape out = x;
  for (int64_t i = 0; i < r; ++i) {
    const int64_t s = a.strides.empty() ? 1 : a.strides[i];
    const int64_t pads = a.pads.empty() ? 0 : a.pads[i] + a.pads[i + r];
    if (s < 1 || a.kernel_shape[i] < 1)
      return ctx.error("kernel_shape and strides must be positive");
    if (x[i + 2] != kDynamicDim) out[i + 2] = (x[i + 2] - 1) * s + a.kernel_shape[i] - pads;
    if (x[i + 2] != kDynamicDim && out[i + 2] < 0)
      return ctx.error(str_cat("the pads make spatial axis ", i, " negative"));
  }
  if (ctx.has_input(2)) {
    const TensorType& os = ctx.input(2);
    if (os.dtype != DType::i64 || os.shape != Shape{r + 2})
      return ctx.error(str_cat("output_shape is ", type_to_string(os), ", expected i64 [", r + 2,
                               "]"));
    const Tensor* c = ctx.constant(2);
    for (int64_t i = 0; i < r + 2; ++i) {
      const int64_t v = c ? c->get_as_int64(i) : kDynamicDim;
      if (i < 2 && c && x[i] != kDynamicDim && v != x[i])
        return ctx.error(str_cat("output_shape ", list_to_string(c->to_int64_vector()),
                                 " changes N or C of X ", shape_to_string(x)));
      if (c && v < 0) return ctx.error(str_cat("output_shape has a negative size ", v));
      if (i >= 2) out[i] = v;
    }
  }
  ctx.set_output(0, {ctx.input(0).dtype, out});
  return absl::OkStatus();
}

// Indices address the shape the attributes give; a larger output_shape holds that block at
// its origin (ONNX's definition), zeros elsewhere.
absl::Status run_max_unpool(const KernelArgs& k) {
  const auto& a = k.get<MaxUnpoolAttrs>();
  const Tensor& x = k.inputs[0];
  const Tensor& idx = k.inputs[1];
  Tensor& y = k.outputs[0];
  const auto r = static_cast<int64_t>(x.shape().size()) - 2;
  Shape block = x.shape();
  for (int64_t i = 0; i < r; ++i)
    block[i + 2] = (x.shape()[i + 2] - 1) * (a.strides.empty() ? 1 : a.strides[i]) +
                   a.kernel_shape[i] - (a.pads.empty() ? 0 : a.pads[i] + a.pads[i + r]);
  for (int64_t i = 0; i < r + 2; ++i)
    if (y.shape()[i] < block[i])
      return absl::InvalidArgumentError(str_cat("output_shape ", shape_to_string(y.shape()),
                                                " is smaller than the unpooled shape ",
                                                shape_to_string(block)));
  const size_t esize = dtype_size(y.dtype());
  std::memset(y.raw(), 0, static_cast<size_t>(y.numel()) * esize);
  const auto block_strides = shape_strides(block);
  const auto out_strides = shape_strides(y.shape());
  const int64_t block_size = shape_numel(block);
  const int64_t* at = idx.data<int64_t>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (at[i] < 0 || at[i] >= block_size)
      return absl::InvalidArgumentError(str_cat("index ", at[i], " (element ", i, " of I) is ",
                                                "outside the unpooled ", block_size,
                                                " elements"));
    int64_t dst = 0;
    for (int64_t d = 0; d < r + 2; ++d) dst += at[i] / block_strides[d] % block[d] * out_strides[d];
    copy_element(y.raw(), dst, x.raw(), i, esize);
  }
  return absl::OkStatus();
}

}  // namespace

void register_max_unpool_op(OpRegistry& r) {
  OpDef d = make_op<MaxUnpoolAttrs>("MaxUnpool", FusionKind::opaque, 2, 3, infer_max_unpool,
                                    run_max_unpool);
  d.dynamic_shapes = true;
  add_builtin(r, std::move(d));
}

}  // namespace collage::ops
