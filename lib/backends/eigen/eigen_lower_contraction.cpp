// Lowering of MatMul, Gemm and Conv (with their elementwise epilogues) to Eigen kernels.
#include <algorithm>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "eigen_lowering.h"
#include "ops/op_util.h"

namespace collage::eigen {
namespace {

using rt_eigen::EwOp;

Tensor transpose_2d(const Tensor& t) {
  const int64_t rows = t.shape()[0], cols = t.shape()[1];
  Tensor out(DType::f32, {cols, rows});
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  return out;
}

Tensor scaled(const Tensor& t, float k) {
  Tensor out(DType::f32, t.shape());
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = src[i] * k;
  return out;
}

std::vector<int64_t> times(std::vector<int64_t> v, int64_t k) {
  for (int64_t& x : v) x *= k;
  return v;
}

absl::StatusOr<LoweredKernel> finish(const char* entry, std::vector<uint8_t> params,
                                     OperandMap& ops) {
  return LoweredKernel{entry, std::move(params), ops.take_constants()};
}

}  // namespace

absl::StatusOr<LoweredKernel> lower_matmul(const Graph& g, const Node& node,
                                           const std::vector<NodeId>& chain, OperandMap& ops) {
  if (absl::Status s = require_f32(node, g); !s.ok()) return s;
  if (node.inputs.size() != 2) return unsupported(node, "expected two inputs");
  Shape a = g.value(node.inputs[0]).type.shape, b = g.value(node.inputs[1]).type.shape;
  if (a.empty() || b.empty()) return unsupported(node, "scalar operands are not supported");
  // numpy matmul: a vector operand is a 1 x K (A) or K x 1 (B) matrix whose unit axis is dropped.
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (b[b.size() - 2] != k)
    return unsupported(
        node, str_cat("inner dimensions differ: ", shape_to_string(a), " x ", shape_to_string(b)));
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  std::optional<Shape> batch = ops::broadcast_shapes(a_batch, b_batch);
  if (!batch) return unsupported(node, "batch dimensions do not broadcast");
  rt_eigen::MatMulParams p;
  absl::StatusOr<rt_eigen::OperandRef> ra = ops.ref(node.inputs[0]), rb = ops.ref(node.inputs[1]);
  if (!ra.ok()) return ra.status();
  if (!rb.ok()) return rb.status();
  p.a = *ra;
  p.b = *rb;
  p.m = m, p.n = n, p.k = k;
  std::vector<int64_t> b_strides = times(ops::broadcast_strides(b_batch, *batch), k * n);
  if (a_batch == *batch &&
      std::all_of(b_strides.begin(), b_strides.end(), [](int64_t s) { return s == 0; })) {
    // One B for every batch and A stored densely: the batch folds into M, one large GEMM.
    p.m = m * shape_numel(*batch);
  } else {
    p.batch_dims = *batch;
    p.a_batch_strides = times(ops::broadcast_strides(a_batch, *batch), m * k);
    p.b_batch_strides = std::move(b_strides);
  }
  ProgramBuilder epilogue(g, ops, g.value(node.outputs[0]).type.shape);
  if (absl::Status s = epilogue.add_chain(chain, node.outputs[0]); !s.ok()) return s;
  p.epilogue = epilogue.take();
  return finish(rt_eigen::kEntryMatMul, rt_eigen::encode_params(p), ops);
}

absl::StatusOr<LoweredKernel> lower_gemm(const Graph& g, const Node& node,
                                         const std::vector<NodeId>& chain, OperandMap& ops) {
  if (absl::Status s = require_f32(node, g); !s.ok()) return s;
  const auto& attrs = node.get<GemmAttrs>();
  const ValueId a = node.inputs[0], b = node.inputs[1];
  const ValueId c = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  const Shape& as = g.value(a).type.shape;
  const Shape& bs = g.value(b).type.shape;
  if (as.size() != 2 || bs.size() != 2) return unsupported(node, "A and B must be matrices");
  rt_eigen::MatMulParams p;
  p.m = attrs.transA ? as[1] : as[0];
  p.k = attrs.transA ? as[0] : as[1];
  p.n = attrs.transB ? bs[0] : bs[1];
  if ((attrs.transB ? bs[1] : bs[0]) != p.k)
    return unsupported(node, "inner dimensions of A and B differ");
  p.trans_a = attrs.transA != 0;
  p.alpha = attrs.alpha;
  absl::StatusOr<rt_eigen::OperandRef> ra = ops.ref(a);
  if (!ra.ok()) return ra.status();
  p.a = *ra;
  if (const Tensor* wb = g.constant_of(b); wb && attrs.transB) {
    // Constant weights are stored K x N once, so the kernel reads them without a transpose.
    p.b = ops.derived_constant([wb] { return transpose_2d(*wb); });
  } else {
    absl::StatusOr<rt_eigen::OperandRef> rb = ops.ref(b);
    if (!rb.ok()) return rb.status();
    p.b = *rb;
    p.trans_b = attrs.transB != 0;
  }
  const Shape out_shape = {p.m, p.n};
  if (g.value(node.outputs[0]).type.shape != out_shape)
    return unsupported(node, "output shape does not match A and B");
  ProgramBuilder epilogue(g, ops, out_shape);
  if (c != kNoValue && attrs.beta != 0.f) {
    const Tensor* wc = g.constant_of(c);
    const Shape& cs = g.value(c).type.shape;
    if (wc && attrs.beta != 1.f && ops::broadcast_shapes(cs, out_shape) == out_shape) {
      // beta folds into a constant bias.
      const float beta = attrs.beta;
      epilogue.add_strided_step(EwOp::add,
                                ops.derived_constant([wc, beta] { return scaled(*wc, beta); }),
                                ops::broadcast_strides(cs, out_shape));
    } else if (absl::Status s = epilogue.add_operand_step(
                   node, attrs.beta == 1.f ? EwOp::add : EwOp::add_scaled, c, false, attrs.beta);
               !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = epilogue.add_chain(chain, node.outputs[0]); !s.ok()) return s;
  p.epilogue = epilogue.take();
  return finish(rt_eigen::kEntryMatMul, rt_eigen::encode_params(p), ops);
}

absl::StatusOr<LoweredKernel> lower_conv(const Graph& g, const Node& node,
                                         const std::vector<NodeId>& chain, OperandMap& ops) {
  if (absl::Status s = require_f32(node, g); !s.ok()) return s;
  const auto& attrs = node.get<ConvAttrs>();
  const Shape& xs = g.value(node.inputs[0]).type.shape;
  const Shape& ws = g.value(node.inputs[1]).type.shape;
  const Shape& os = g.value(node.outputs[0]).type.shape;
  const size_t spatial = xs.size() - 2;
  if (xs.size() < 3 || spatial > 2 || ws.size() != xs.size() || os.size() != xs.size())
    return unsupported(node, str_cat("only 1-D and 2-D convolutions are supported (input ",
                                     shape_to_string(xs), ")"));
  auto list_or = [&](const std::vector<int64_t>& v, int64_t fill) {
    return v.empty() ? std::vector<int64_t>(spatial, fill) : v;
  };
  const std::vector<int64_t> strides = list_or(attrs.strides, 1);
  const std::vector<int64_t> dilations = list_or(attrs.dilations, 1);
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != kernel)
    return unsupported(node, "kernel_shape differs from the weights' shape");
  if (strides.size() != spatial || dilations.size() != spatial)
    return unsupported(node, "strides and dilations need one value per spatial axis");
  std::vector<int64_t> pad_begin(spatial, 0);
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t in = xs[2 + d], out = os[2 + d];
    if (attrs.auto_pad == "NOTSET") {
      if (!attrs.pads.empty()) {
        if (attrs.pads.size() != 2 * spatial) return unsupported(node, "bad pads");
        pad_begin[d] = attrs.pads[d];
      }
    } else if (attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER") {
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in);
      pad_begin[d] = attrs.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (attrs.auto_pad != "VALID") {
      return unsupported(node, str_cat("auto_pad \"", attrs.auto_pad, "\" is not supported"));
    }
    if (pad_begin[d] < 0) return unsupported(node, "negative pads are not supported");
  }
  if (attrs.group < 1 || ws[1] * attrs.group != xs[1] || ws[0] % attrs.group != 0)
    return unsupported(node, "weights do not match the input channels and group");
  rt_eigen::ConvParams p;
  absl::StatusOr<rt_eigen::OperandRef> rx = ops.ref(node.inputs[0]), rw = ops.ref(node.inputs[1]);
  if (!rx.ok()) return rx.status();
  if (!rw.ok()) return rw.status();
  p.x = *rx;
  p.w = *rw;
  const bool two_d = spatial == 2;  // a 1-D convolution is a 2-D one of height 1
  p.batch = xs[0], p.channels = xs[1], p.out_channels = ws[0], p.group = attrs.group;
  p.height = two_d ? xs[2] : 1, p.width = xs.back();
  p.kernel_h = two_d ? kernel[0] : 1, p.kernel_w = kernel.back();
  p.out_h = two_d ? os[2] : 1, p.out_w = os.back();
  p.stride_h = two_d ? strides[0] : 1, p.stride_w = strides.back();
  p.dilation_h = two_d ? dilations[0] : 1, p.dilation_w = dilations.back();
  p.pad_top = two_d ? pad_begin[0] : 0, p.pad_left = pad_begin.back();
  ProgramBuilder epilogue(g, ops, os);
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    const ValueId bias = node.inputs[2];
    if (g.value(bias).type.shape != Shape{ws[0]})
      return unsupported(node, "bias must have M values");
    absl::StatusOr<rt_eigen::OperandRef> rb = ops.ref(bias);
    if (!rb.ok()) return rb.status();
    std::vector<int64_t> bias_strides(os.size(), 0);
    bias_strides[1] = 1;  // one value per output channel
    epilogue.add_strided_step(EwOp::add, *rb, std::move(bias_strides));
  }
  if (absl::Status s = epilogue.add_chain(chain, node.outputs[0]); !s.ok()) return s;
  p.epilogue = epilogue.take();
  return finish(rt_eigen::kEntryConv, rt_eigen::encode_params(p), ops);
}

}  // namespace collage::eigen
