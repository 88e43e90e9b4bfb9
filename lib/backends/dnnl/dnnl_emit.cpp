// Parameter emission of the dnnl backend: maps each anchor and its post-op chain onto the runtime
// module's parameter structs. Weight transforms that oneDNN cannot express (ConvTranspose's
// weight order, Gemm's transB and alpha, batch-norm statistics) are applied to the constants here.
#include "backends/dnnl/dnnl_emit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "collage/ops/nn.h"
#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "backends/dnnl/dnnl_emitter.h"
#include "ops/op_util.h"

namespace collage::dnnl_backend {
namespace {

Dims identity(const Dims& d) {
  return d;
}

// out[a][c][b][d] = in[a][b][c][d] for a contiguous tensor viewed as A x B x C x D.
Tensor swap_middle_axes(const Tensor& t, int64_t a, int64_t b, int64_t c, int64_t d, Shape shape) {
  Tensor out(DType::f32, std::move(shape));
  const float* in = t.data<float>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k)
        std::memcpy(o + ((i * c + k) * b + j) * d, in + ((i * b + j) * c + k) * d,
                    static_cast<size_t>(d) * sizeof(float));
  return out;
}

absl::StatusOr<EmittedKernel> emit_conv(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  const bool transposed = plan.anchor == Anchor::conv_transpose;
  const Shape& x = g.value(n.inputs[0]).type.shape;
  const Shape& y = g.value(n.outputs[0]).type.shape;
  const Tensor& w = *g.constant_of(n.inputs[1]);
  const int64_t groups = transposed ? n.get<ConvTransposeAttrs>().group : n.get<ConvAttrs>().group;
  auto geo = window_geometry(g, n);
  if (!geo.ok()) return geo.status();
  rt_dnnl::ConvParams p;
  DNNL_ASSIGN_OR_RETURN(p.src, e.value(n.inputs[0], dims_of(x)));
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output(dims_of(y)));
  // oneDNN weights: {OC, IC, k...}, grouped {G, OC/G, IC/G, k...}.
  const Dims kernel(w.shape().begin() + 2, w.shape().end());
  const int64_t ksize = shape_numel(kernel);
  Tensor weights = w;
  Dims wdims;
  if (!transposed) {
    // ONNX's M x C/G x k is already G x M/G x C/G x k.
    wdims = {w.shape()[0], w.shape()[1]};
    if (groups > 1) wdims = {groups, w.shape()[0] / groups, w.shape()[1]};
  } else {
    // ONNX's C x M/G x k is G x C/G x M/G x k: swap the two channel axes.
    const int64_t cg = w.shape()[0] / groups, mg = w.shape()[1];
    wdims = groups > 1 ? Dims{groups, mg, cg} : Dims{mg, cg};
    Dims full = wdims;
    full.insert(full.end(), kernel.begin(), kernel.end());
    weights = swap_middle_axes(w, groups, cg, mg, ksize, full);
  }
  wdims.insert(wdims.end(), kernel.begin(), kernel.end());
  DNNL_ASSIGN_OR_RETURN(p.weights, e.constant(weights, wdims));
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue)
    DNNL_ASSIGN_OR_RETURN(p.bias, e.value(n.inputs[2], {y[1]}));
  p.groups = groups;
  p.strides = geo->strides;
  p.dilations = geo->dilations;
  p.pad_begin = geo->pad_begin;
  p.pad_end = geo->pad_end;
  DNNL_ASSIGN_OR_RETURN(p.post_ops, e.post_ops(plan, y.size(), p.dst.dims, identity, true));
  if (absl::Status s = normalize_post_ops(p.post_ops); !s.ok()) return s;
  return e.finish(transposed ? rt_dnnl::OpKind::deconv : rt_dnnl::OpKind::conv, p, threads);
}

absl::StatusOr<EmittedKernel> emit_matmul(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  const Shape& a = g.value(n.inputs[0]).type.shape;
  const Shape& b = g.value(n.inputs[1]).type.shape;
  const Shape& y = g.value(n.outputs[0]).type.shape;
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  const Shape a2 = a1 ? Shape{1, a[0]} : a, b2 = b1 ? Shape{b[0], 1} : b;
  const size_t r = std::max(a2.size(), b2.size());
  const Dims ad = align_rank(a2, r), bd = align_rank(b2, r);
  Dims dst(r);
  for (size_t i = 0; i + 2 < r; ++i) dst[i] = std::max(ad[i], bd[i]);
  dst[r - 2] = ad[r - 2];
  dst[r - 1] = bd[r - 1];
  const size_t batch = r - 2;
  // IR result dims (batch, [M], [N]) -> kernel dims (batch, M or 1, N or 1).
  const DimsMap map = [=](const Dims& d) {
    Dims out(d.begin(), d.begin() + batch);
    size_t i = batch;
    out.push_back(a1 ? 1 : d[i++]);
    out.push_back(b1 ? 1 : d[i]);
    return out;
  };
  rt_dnnl::MatMulParams p;
  DNNL_ASSIGN_OR_RETURN(p.a, e.value(n.inputs[0], ad));
  DNNL_ASSIGN_OR_RETURN(p.b, e.value(n.inputs[1], bd));
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output(dst));
  DNNL_ASSIGN_OR_RETURN(p.post_ops, e.post_ops(plan, y.size(), dst, map, true));
  if (absl::Status s = normalize_post_ops(p.post_ops); !s.ok()) return s;
  return e.finish(rt_dnnl::OpKind::matmul, p, threads);
}

// A 2-D f32 tensor transposed and scaled.
Tensor transposed_scaled(const Tensor& t, bool transpose, float scale) {
  const int64_t rows = t.shape()[0], cols = t.shape()[1];
  Tensor out(DType::f32, transpose ? Shape{cols, rows} : Shape{rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out.data<float>()[transpose ? j * rows + i : i * cols + j] =
          scale * t.data<float>()[i * cols + j];
  return out;
}

absl::StatusOr<EmittedKernel> emit_gemm(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  const auto& at = n.get<GemmAttrs>();
  const Shape& y = g.value(n.outputs[0]).type.shape;
  const int64_t m = y[0], nn = y[1];
  const int64_t k = g.value(n.inputs[0]).type.shape[at.transA ? 0 : 1];
  rt_dnnl::MatMulParams p;
  if (const Tensor* ta = g.constant_of(n.inputs[0])) {
    DNNL_ASSIGN_OR_RETURN(p.a, e.constant(transposed_scaled(*ta, at.transA != 0, 1.f), {m, k}));
  } else {
    DNNL_ASSIGN_OR_RETURN(p.a, e.value(n.inputs[0], {m, k}));
    p.a.transposed = at.transA != 0;
  }
  bool alpha_done = at.alpha == 1.f;
  if (const Tensor* tb = g.constant_of(n.inputs[1])) {
    DNNL_ASSIGN_OR_RETURN(p.b,
                          e.constant(transposed_scaled(*tb, at.transB != 0, at.alpha), {k, nn}));
    alpha_done = true;
  } else {
    DNNL_ASSIGN_OR_RETURN(p.b, e.value(n.inputs[1], {k, nn}));
    p.b.transposed = at.transB != 0;
  }
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output({m, nn}));
  std::vector<PostOp> pre;
  if (!alpha_done) {
    PostOp scale;
    scale.kind = rt_dnnl::PostOpKind::eltwise;
    scale.eltwise = {rt_dnnl::EltwiseAlg::linear, at.alpha, 0.f};
    pre.push_back(scale);
  }
  const bool has_c = n.inputs.size() > 2 && n.inputs[2] != kNoValue && at.beta != 0.f;
  if (has_c) {
    const ValueId c = n.inputs[2];
    const Dims cd = align_rank(g.value(c).type.shape, 2);
    Operand operand;
    if (const Tensor* tc = g.constant_of(c)) {
      Tensor scaled = tc->clone();
      for (int64_t i = 0; i < scaled.numel(); ++i) scaled.data<float>()[i] *= at.beta;
      DNNL_ASSIGN_OR_RETURN(operand, e.constant(scaled, cd));
    } else {
      DNNL_ASSIGN_OR_RETURN(operand, e.value(c, cd));
    }
    if (pre.empty() && operand.kind == SourceKind::constant) {
      p.bias = std::move(operand);  // added before any post-op, as Gemm's C is
    } else {
      PostOp add;
      add.kind = rt_dnnl::PostOpKind::binary;
      add.binary = rt_dnnl::BinaryAlg::add;
      add.operand = std::move(operand);
      pre.push_back(std::move(add));
    }
  }
  DNNL_ASSIGN_OR_RETURN(p.post_ops, e.post_ops(plan, 2, p.dst.dims, identity, pre.empty()));
  p.post_ops.insert(p.post_ops.begin(), pre.begin(), pre.end());
  if (absl::Status s = normalize_post_ops(p.post_ops); !s.ok()) return s;
  return e.finish(rt_dnnl::OpKind::matmul, p, threads);
}

absl::StatusOr<EmittedKernel> emit_pool(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  auto geo = window_geometry(g, n);
  if (!geo.ok()) return geo.status();
  rt_dnnl::PoolParams p;
  DNNL_ASSIGN_OR_RETURN(p.src, e.value(n.inputs[0], dims_of(g.value(n.inputs[0]).type.shape)));
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output(dims_of(g.value(n.outputs[0]).type.shape)));
  if (n.op_name() == "MaxPool")
    p.alg = rt_dnnl::PoolAlg::max;
  else if (n.op_name() == "AveragePool" && n.get<AveragePoolAttrs>().count_include_pad)
    p.alg = rt_dnnl::PoolAlg::avg_include_pad;
  else
    p.alg = rt_dnnl::PoolAlg::avg_exclude_pad;
  p.kernel = geo->kernel;
  p.strides = geo->strides;
  p.dilations = geo->dilations;
  p.pad_begin = geo->pad_begin;
  p.pad_end = geo->pad_end;
  return e.finish(rt_dnnl::OpKind::pool, p, threads);
}

absl::StatusOr<EmittedKernel> emit_softmax(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  const Shape& x = g.value(n.inputs[0]).type.shape;
  rt_dnnl::SoftmaxParams p;
  DNNL_ASSIGN_OR_RETURN(p.src, e.value(n.inputs[0], dims_of(x)));
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output(dims_of(x)));
  p.axis = static_cast<int32_t>(
      x.empty() ? 0 : *ops::normalize_axis(n.get<SoftmaxAttrs>().axis, x.size()));
  p.log = n.op_name() == "LogSoftmax";
  return e.finish(rt_dnnl::OpKind::softmax, p, threads);
}

// `t` broadcast to `shape` and flattened to `size` elements.
Tensor expand_flat(const Tensor& t, const Shape& shape, int64_t size) {
  if (t.shape() == shape) return t.reshaped({size});
  Tensor out(DType::f32, {size});
  ops::for_each_broadcast(t.shape(), t.shape(), shape, [&](int64_t i, int64_t, int64_t o) {
    out.data<float>()[o] = t.data<float>()[i];
  });
  return out;
}

absl::StatusOr<EmittedKernel> emit_layer_norm(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  const Shape& x = g.value(n.inputs[0]).type.shape;
  const auto& a = n.get<LayerNormalizationAttrs>();
  const int64_t axis = *ops::normalize_axis(a.axis, x.size());
  const Shape norm(x.begin() + axis, x.end());
  const int64_t size = shape_numel(norm), rows = shape_numel(x) / size;
  rt_dnnl::LayerNormParams p;
  DNNL_ASSIGN_OR_RETURN(p.src, e.value(n.inputs[0], {rows, size}));
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output({rows, size}));
  DNNL_ASSIGN_OR_RETURN(p.scale,
                        e.constant(expand_flat(*g.constant_of(n.inputs[1]), norm, size), {size}));
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue)
    DNNL_ASSIGN_OR_RETURN(p.shift,
                          e.constant(expand_flat(*g.constant_of(n.inputs[2]), norm, size), {size}));
  p.epsilon = a.epsilon;
  return e.finish(rt_dnnl::OpKind::layer_norm, p, threads);
}

absl::StatusOr<EmittedKernel> emit_eltwise(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  const TensorType& x = g.value(n.inputs[0]).type;
  rt_dnnl::EltwiseParams p;
  if (g.value(n.inputs[0]).layout == g.value(g.outputs()[0]).layout) {
    // One layout on both sides: the functions apply in memory order, as one flat vector.
    DNNL_ASSIGN_OR_RETURN(p.src, e.value(n.inputs[0], {x.numel()}, /*memory_order=*/true));
    DNNL_ASSIGN_OR_RETURN(p.dst, e.output({x.numel()}, /*memory_order=*/true));
  } else {
    DNNL_ASSIGN_OR_RETURN(p.src, e.value(n.inputs[0], dims_of(x.shape)));
    DNNL_ASSIGN_OR_RETURN(p.dst, e.output(dims_of(x.shape)));
  }
  p.ops = *eltwise_ops(n);
  return e.finish(rt_dnnl::OpKind::eltwise, p, threads);
}

absl::StatusOr<EmittedKernel> emit_binary(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  const Shape& y = g.value(n.outputs[0]).type.shape;
  // oneDNN broadcasts only src1: src0 is the operand with the output's shape.
  const bool swap = g.value(n.inputs[0]).type.shape != y;
  const ValueId s0 = n.inputs[swap ? 1 : 0], s1 = n.inputs[swap ? 0 : 1];
  rt_dnnl::BinaryParams p;
  DNNL_ASSIGN_OR_RETURN(p.src0, e.value(s0, dims_of(y)));
  DNNL_ASSIGN_OR_RETURN(p.src1, e.value(s1, dims_of(align_rank(g.value(s1).type.shape, y.size()))));
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output(dims_of(y)));
  p.alg = *binary_alg(n.op_name());
  const DimsMap map = [](const Dims& d) { return d.empty() ? Dims{1} : d; };
  DNNL_ASSIGN_OR_RETURN(p.post_ops, e.post_ops(plan, y.size(), p.dst.dims, map, false));
  // Swapped Sub or Div operands: b - a = -(a - b), b / a = 1 / (a / b).
  if (swap && !n.op->commutative) p.post_ops.insert(p.post_ops.begin(), inverse_post_op(p.alg));
  if (absl::Status s = normalize_post_ops(p.post_ops); !s.ok()) return s;
  return e.finish(rt_dnnl::OpKind::binary, p, threads);
}

absl::StatusOr<EmittedKernel> emit_concat(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  const TensorType& y = g.value(n.outputs[0]).type;
  rt_dnnl::ConcatParams p;
  for (ValueId v : n.inputs) {
    Operand op;
    DNNL_ASSIGN_OR_RETURN(op, e.value(v, dims_of(g.value(v).type.shape)));
    p.srcs.push_back(std::move(op));
  }
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output(dims_of(y.shape)));
  p.axis = static_cast<int32_t>(*ops::normalize_axis(n.get<ConcatAttrs>().axis, y.shape.size()));
  p.dtype = static_cast<int32_t>(y.dtype);
  return e.finish(rt_dnnl::OpKind::concat, p, threads);
}

#undef DNNL_ASSIGN_OR_RETURN

}  // namespace

absl::StatusOr<EmittedKernel> emit_kernel(const Graph& group, const GroupPlan& plan,
                                          int num_threads) {
  Emitter e(group);
  switch (plan.anchor) {
    case Anchor::conv:
    case Anchor::conv_transpose:
      return emit_conv(e, plan, num_threads);
    case Anchor::matmul:
      return emit_matmul(e, plan, num_threads);
    case Anchor::gemm:
      return emit_gemm(e, plan, num_threads);
    case Anchor::pool:
      return emit_pool(e, plan, num_threads);
    case Anchor::softmax:
      return emit_softmax(e, plan, num_threads);
    case Anchor::layer_norm:
      return emit_layer_norm(e, plan, num_threads);
    case Anchor::eltwise:
      return emit_eltwise(e, plan, num_threads);
    case Anchor::binary:
      return emit_binary(e, plan, num_threads);
    case Anchor::concat:
      return emit_concat(e, plan, num_threads);
    case Anchor::qconv:
      return emit_qconv(e, plan, num_threads);
    case Anchor::qmatmul:
      return emit_qmatmul(e, plan, num_threads);
    case Anchor::recurrent:
      return emit_recurrent(e, plan, num_threads);
    case Anchor::deform_conv:
      return emit_deform_conv(e, plan, num_threads);
  }
  return absl::InternalError("dnnl: unknown anchor");
}

std::vector<uint8_t> serialize_params(rt_dnnl::Header& header, const std::vector<uint8_t>& body) {
  rt_dnnl::ParamWriter w;
  header.io(w);
  std::vector<uint8_t> bytes = std::move(w.bytes());
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

}  // namespace collage::dnnl_backend
