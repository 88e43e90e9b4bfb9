// DeformConv on the dnnl backend: the checks (2-D, f32) and the parameters of the module's
// deformable convolution kernel (a gather of bilinear samples into columns, then a oneDNN matmul
// per group).
#include "backends/dnnl/dnnl_emitter.h"
#include "collage/ops/geometry.h"
#include "dnnl_params_deform.h"

namespace collage::dnnl_backend {
namespace {

bool present(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] != kNoValue;
}

struct DeformShape {
  int64_t groups = 1, offset_groups = 1;
  Dims kernel, strides, dilations, pad_begin;
};

absl::StatusOr<DeformShape> deform_shape(const Graph& g, const Node& n) {
  const auto& a = n.get<DeformConvAttrs>();
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (present(n, i) && g.value(n.inputs[i]).type.dtype != DType::f32)
      return unsupported(n, str_cat("input ", i, " is not f32"));
  const Shape& x = g.value(n.inputs[0]).type.shape;
  const Shape& w = g.value(n.inputs[1]).type.shape;
  const TensorType& y = g.value(n.outputs[0]).type;
  if (x.size() != 4 || w.size() != 4 || y.numel() == 0)
    return unsupported(n, "dnnl runs the 2-D DeformConv with a non-empty output");
  DeformShape s;
  s.groups = a.group;
  s.offset_groups = a.offset_group;
  s.kernel = {w[2], w[3]};
  s.strides = a.strides.empty() ? Dims{1, 1} : a.strides;
  s.dilations = a.dilations.empty() ? Dims{1, 1} : a.dilations;
  s.pad_begin = a.pads.empty() ? Dims{0, 0} : Dims{a.pads[0], a.pads[1]};
  if (s.strides.size() != 2 || s.dilations.size() != 2 || (!a.pads.empty() && a.pads.size() != 4))
    return unsupported(n, "strides, dilations or pads do not have two spatial axes");
  return s;
}

}  // namespace

absl::Status check_deform_conv(const Graph& g, const Node& n) {
  return deform_shape(g, n).status();
}

absl::StatusOr<EmittedKernel> emit_deform_conv(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  auto shape = deform_shape(g, n);
  if (!shape.ok()) return shape.status();
  const Shape& w = g.value(n.inputs[1]).type.shape;
  const int64_t groups = shape->groups, m = w[0], per_group = w[1] * w[2] * w[3];
  rt_dnnl::DeformConvParams p;
  DNNL_ASSIGN_OR_RETURN(p.x, e.value(n.inputs[0], dims_of(g.value(n.inputs[0]).type.shape)));
  DNNL_ASSIGN_OR_RETURN(p.weights, e.value(n.inputs[1], {1, groups, m / groups, per_group}));
  DNNL_ASSIGN_OR_RETURN(p.offset, e.value(n.inputs[2], dims_of(g.value(n.inputs[2]).type.shape)));
  if (present(n, 3))
    DNNL_ASSIGN_OR_RETURN(p.bias, e.value(n.inputs[3], {1, groups, m / groups, 1}));
  if (present(n, 4))
    DNNL_ASSIGN_OR_RETURN(p.mask, e.value(n.inputs[4], dims_of(g.value(n.inputs[4]).type.shape)));
  DNNL_ASSIGN_OR_RETURN(p.dst, e.output(dims_of(g.value(n.outputs[0]).type.shape)));
  p.groups = groups;
  p.offset_groups = shape->offset_groups;
  p.kernel = shape->kernel;
  p.strides = shape->strides;
  p.dilations = shape->dilations;
  p.pad_begin = shape->pad_begin;
  return e.finish(rt_dnnl::OpKind::deform_conv, p, threads);
}

}  // namespace collage::dnnl_backend
