// Parameter emission of the dnnl backend's integer contractions: ConvInteger and QLinearConv as
// qconv, MatMulInteger and QLinearMatMul as qmatmul, with the i8 weights and scales that
// plan_quant derives from the node's constants.
#include "backends/dnnl/dnnl_emitter.h"

namespace collage::dnnl_backend {

absl::StatusOr<EmittedKernel> emit_qconv(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  auto q = plan_quant(g, n);
  if (!q.ok()) return q.status();
  auto geo = window_geometry(g, n);
  if (!geo.ok()) return geo.status();
  const QuantInputs at = quant_inputs(n);
  const Shape& x = g.value(n.inputs[at.x]).type.shape;
  const Shape& y = g.value(n.outputs[0]).type.shape;
  const Shape& w = q->weights.shape();
  const int64_t groups = n.get<ConvAttrs>().group;
  rt_dnnl::QConvParams p;
  DNNL_ASSIGN_OR_RETURN(p.conv.src, e.value(n.inputs[at.x], dims_of(x)));
  DNNL_ASSIGN_OR_RETURN(p.conv.dst, e.output(dims_of(y)));
  // ONNX's M x C/G x k is oneDNN's G x M/G x C/G x k.
  Dims wdims = groups > 1 ? Dims{groups, w[0] / groups, w[1]} : Dims{w[0], w[1]};
  wdims.insert(wdims.end(), w.begin() + 2, w.end());
  DNNL_ASSIGN_OR_RETURN(p.conv.weights, e.constant(q->weights, wdims));
  if (at.bias < n.inputs.size() && n.inputs[at.bias] != kNoValue)
    DNNL_ASSIGN_OR_RETURN(p.conv.bias, e.value(n.inputs[at.bias], {y[1]}));
  p.conv.groups = groups;
  p.conv.strides = geo->strides;
  p.conv.dilations = geo->dilations;
  p.conv.pad_begin = geo->pad_begin;
  p.conv.pad_end = geo->pad_end;
  p.quant = q->params;
  return e.finish(rt_dnnl::OpKind::qconv, p, threads);
}

absl::StatusOr<EmittedKernel> emit_qmatmul(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  auto q = plan_quant(g, n);
  if (!q.ok()) return q.status();
  const QuantInputs at = quant_inputs(n);
  const Shape& a = g.value(n.inputs[at.x]).type.shape;
  const Shape& y = g.value(n.outputs[0]).type.shape;
  rt_dnnl::QMatMulParams p;
  DNNL_ASSIGN_OR_RETURN(p.matmul.a, e.value(n.inputs[at.x], Dims(a.begin(), a.end())));
  DNNL_ASSIGN_OR_RETURN(p.matmul.b, e.constant(q->weights, align_rank(q->weights.shape(),
                                                                      y.size())));
  DNNL_ASSIGN_OR_RETURN(p.matmul.dst, e.output(Dims(y.begin(), y.end())));
  p.quant = q->params;
  return e.finish(rt_dnnl::OpKind::qmatmul, p, threads);
}

}  // namespace collage::dnnl_backend
