// Cast between every pair of dtypes (ONNX semantics with defined out-of-range results), BitCast
// (the same bits as another dtype of the same width), Identity, and Dropout in inference mode.
#include <cstring>

#include "collage/ops/elementwise.h"
#include "ops/elementwise_common.h"

namespace collage::ops {
namespace {

absl::Status infer_cast(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  const std::string& to = ctx.attrs<CastAttrs>().to;
  std::optional<DType> t = parse_dtype(to);
  if (!t)
    return ctx.error(str_cat("attribute 'to' is \"", to, "\", which is no dtype (expected one of ",
                             type_set_to_string(kAllTypes), ")"));
  ctx.set_output(0, TensorType{*t, ctx.input(0).shape});
  return absl::OkStatus();
}

absl::Status infer_bitcast(InferContext& ctx) {
  if (absl::Status s = infer_cast(ctx); !s.ok()) return s;
  const DType from = ctx.input(0).dtype, to = ctx.outputs()[0].dtype;
  if (dtype_size(from) != dtype_size(to))
    return ctx.error(str_cat("cannot reinterpret ", dtype_name(from), " as ", dtype_name(to),
                             ": their widths differ"));
  return absl::OkStatus();
}

void copy_tensor(const Tensor& in, Tensor& out) {
  if (in.bytes() > 0) std::memcpy(out.raw(), in.raw(), in.bytes());
}

absl::Status cast_kernel(const KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  Tensor& out = args.outputs[0];
  if (in.dtype() == out.dtype()) {
    copy_tensor(in, out);
    return absl::OkStatus();
  }
  return dispatch_codec<kAllTypes>(in.dtype(), [&](auto in_codec) {
    using CI = decltype(in_codec);
    return dispatch_codec<kAllTypes>(out.dtype(), [&](auto out_codec) {
      using CO = decltype(out_codec);
      map_elements<CI, CO>(
          in, out, [](typename CI::Compute v) { return convert_value<typename CO::Compute>(v); });
    });
  });
}

absl::Status infer_identity(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status copy_kernel(const KernelArgs& args) {
  copy_tensor(args.inputs[0], args.outputs[0]);
  return absl::OkStatus();
}

// Training with a ratio above 0 drops elements at random, which inference does not (with ratio 0
// training is the identity too).
absl::Status check_inference(const DropoutAttrs& a) {
  if (a.training_mode != 0.f && a.ratio != 0.f)
    return absl::UnimplementedError(str_cat("training_mode is true with a ratio other than 0 (",
                                            static_cast<double>(a.ratio),
                                            ", random); collage runs inference only"));
  return absl::OkStatus();
}

absl::Status infer_dropout(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 2); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, kFloatTypes); !s.ok()) return s;
  const auto& a = ctx.attrs<DropoutAttrs>();
  if (!(a.ratio >= 0.f && a.ratio < 1.f))
    return ctx.error(str_cat("ratio ", static_cast<double>(a.ratio), " is outside [0, 1)"));
  if (absl::Status s = check_inference(a); !s.ok())
    return absl::Status(s.code(), str_cat(ctx.op_name(), " '", ctx.node_name(), "': ", s.message()));
  ctx.set_output(0, ctx.input(0));
  if (ctx.requested_outputs() == 2)
    ctx.set_output(1, TensorType{DType::boolean, ctx.input(0).shape});
  return absl::OkStatus();
}

absl::Status dropout_kernel(const KernelArgs& args) {
  if (absl::Status s = check_inference(args.get<DropoutAttrs>()); !s.ok()) return s;
  copy_tensor(args.inputs[0], args.outputs[0]);
  if (args.outputs.size() > 1) {
    Tensor& mask = args.outputs[1];
    if (mask.bytes() > 0) std::memset(mask.raw(), 1, mask.bytes());
  }
  return absl::OkStatus();
}

}  // namespace

void register_cast_ops(OpRegistry& r) {
  add_builtin_op(
      r, make_op<CastAttrs>("Cast", FusionKind::elementwise, 1, 1, infer_cast, cast_kernel));
  add_builtin_op(r, make_op<CastAttrs>("BitCast", FusionKind::elementwise, 1, 1, infer_bitcast,
                                       [](const KernelArgs& args) {
                                         copy_tensor(args.inputs[0], args.outputs[0]);
                                         return absl::OkStatus();
                                       }));
  add_builtin_op(
      r, make_op<NoAttrs>("Identity", FusionKind::elementwise, 1, 1, infer_identity, copy_kernel));
  add_builtin_op(r, make_op<DropoutAttrs>("Dropout", FusionKind::elementwise, 1, 1, infer_dropout,
                                          dropout_kernel));
}

}  // namespace collage::ops
