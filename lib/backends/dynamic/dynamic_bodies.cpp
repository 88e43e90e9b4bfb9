// The bodies of If, Loop and Scan as plans of the dynamic module's kernels (dyn_body.h): each
// body node a step taking its operands (the body's constants among them) as arguments, the
// constants' values kept once among the control-flow kernel's constants.
#include <algorithm>

#include "collage/ops/control_flow.h"
#include "core/str_cat.h"
#include "dyn_body.h"
#include "dynamic_encode.h"

namespace collage {
namespace {

using rt_dynamic::Body;
using rt_dynamic::BodyStep;

std::vector<const Graph*> bodies_of(const Node& node) {
  if (node.op_name() == "If") {
    const auto& a = node.get<IfAttrs>();
    return {a.then_branch.get(), a.else_branch.get()};
  }
  if (node.op_name() == "Loop") return {node.get<LoopAttrs>().body.get()};
  return {node.get<ScanAttrs>().body.get()};
}

absl::StatusOr<Body> encode_body(const Graph& g, std::vector<Tensor>* constants) {
  Body b;
  // Only the constants a step or an output reads are kept.
  std::vector<bool> read(g.values().size(), false);
  for (const Node& n : g.nodes())
    for (ValueId v : n.inputs)
      if (v != kNoValue) read[v] = true;
  for (ValueId v : g.outputs()) read[v] = true;
  for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v) {
    const TensorType& t = g.value(v).type;
    rt_dynamic::BodyValue bv;
    bv.dtype = static_cast<int32_t>(t.dtype);
    bv.shape = t.shape;
    for (int64_t& d : bv.shape)
      if (d < 0) d = -1;
    if (const Tensor* c = g.constant_of(v); c && read[v]) {
      bv.constant = static_cast<int64_t>(constants->size());
      constants->push_back(*c);
    }
    b.values.push_back(std::move(bv));
  }
  b.inputs.assign(g.inputs().begin(), g.inputs().end());
  b.outputs.assign(g.outputs().begin(), g.outputs().end());
  for (const Node& n : g.nodes()) {
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs)
      if (v != kNoValue && std::find(ins.begin(), ins.end(), v) == ins.end()) ins.push_back(v);
    auto p = encode_node(g, n, ins, n.outputs, constants, /*constants_as_inputs=*/true);
    if (!p.ok()) return p.status();
    BodyStep s;
    s.name = n.name;
    s.entry = std::string(rt_dynamic::dyn_op_name(p->op));
    s.params = rt_dynamic::encode_params(*p);
    s.args.assign(ins.begin(), ins.end());
    s.args.insert(s.args.end(), n.outputs.begin(), n.outputs.end());
    s.num_inputs = static_cast<int64_t>(ins.size());
    b.steps.push_back(std::move(s));
  }
  return b;
}

}  // namespace

absl::Status check_bodies_encodable(const Node& node) {
  for (const Graph* body : bodies_of(node)) {
    if (!body)
      return absl::InvalidArgumentError(
          str_cat("dynamic: ", node.op_name(), " '", node.name, "' without a body"));
    for (const Node& n : body->nodes())
      if (absl::Status s = check_encodable(*body, n); !s.ok())
        return absl::Status(s.code(), str_cat(node.op_name(), " '", node.name, "': ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status encode_control_flow(const Node& node, const std::vector<ValueId>& kernel_outputs,
                                 std::vector<Tensor>* constants, rt_dynamic::DynParams* p) {
  for (const Graph* body : bodies_of(node)) {
    auto b = encode_body(*body, constants);
    if (!b.ok())
      return absl::Status(b.status().code(),
                          str_cat(node.op_name(), " '", node.name, "': ", b.status().message()));
    p->bodies.push_back(rt_dynamic::encode_body(*b));
  }
  if (node.op_name() == "Loop") {
    p->lists.push_back({node.get<LoopAttrs>().num_captured});
  } else if (node.op_name() == "Scan") {
    const auto& a = node.get<ScanAttrs>();
    p->lists = {{a.num_scan_inputs},     {a.num_captured},         a.scan_input_axes,
                a.scan_input_directions, a.scan_output_axes,       a.scan_output_directions};
  }
  std::vector<int64_t> slots;
  for (ValueId v : kernel_outputs)
    slots.push_back(std::find(node.outputs.begin(), node.outputs.end(), v) - node.outputs.begin());
  p->lists.push_back(std::move(slots));
  return absl::OkStatus();
}

}  // namespace collage
