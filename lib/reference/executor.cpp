// Sequential interpreter over a graph using reference kernels.
#include "core/str_cat.h"
#include "collage/reference.h"

namespace collage {

absl::StatusOr<std::vector<Tensor>> evaluate_op(const OpDef& op, const OpAttrs& attrs,
                                                const std::vector<Tensor>& inputs,
                                                std::string_view node_name, int num_outputs) {
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> consts;
  for (const Tensor& t : inputs) {
    types.push_back(t.empty() ? nullptr : &t.type());
    consts.push_back(t.empty() ? nullptr : &t);
  }
  InferContext ictx(op.name, node_name, attrs, std::move(types), std::move(consts), num_outputs);
  if (absl::Status s = op.infer(ictx); !s.ok()) return s;
  std::vector<Tensor> outs;
  outs.reserve(ictx.outputs().size());
  for (const TensorType& t : ictx.outputs()) outs.emplace_back(t.dtype, t.shape);
  KernelArgs args{inputs, outs, attrs};
  if (absl::Status s = op.reference(args); !s.ok()) return s;
  return outs;
}

absl::StatusOr<std::vector<Tensor>> run_reference(const Graph& g,
                                                  const std::vector<Tensor>& inputs) {
  if (inputs.size() != g.inputs().size())
    return absl::InvalidArgumentError(str_cat("graph '", g.name(), "' takes ",
                                                   g.inputs().size(), " inputs, ", inputs.size(),
                                                   " given"));
  std::vector<Tensor> values(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    if (inputs[i].type() != v.type)
      return absl::InvalidArgumentError(str_cat("input '", v.name, "': expected ",
                                                     type_to_string(v.type), ", got ",
                                                     type_to_string(inputs[i].type())));
    values[g.inputs()[i]] = inputs[i];
  }
  for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v) {
    if (const Tensor* c = g.constant_of(v)) values[v] = *c;
  }
  // Remaining reads per value, so activations are released early.
  std::vector<int> reads(g.values().size(), 0);
  for (const Node& n : g.nodes())
    for (ValueId in : n.inputs)
      if (in != kNoValue) ++reads[in];
  for (ValueId out : g.outputs()) ++reads[out];

  std::vector<Tensor> ins;
  for (const Node& n : g.nodes()) {
    ins.clear();
    for (ValueId in : n.inputs) ins.push_back(in == kNoValue ? Tensor() : values[in]);
    std::vector<Tensor> outs;
    for (ValueId out : n.outputs) outs.emplace_back(g.value(out).type.dtype, g.value(out).type.shape);
    KernelArgs args{ins, outs, *n.attrs};
    if (absl::Status s = n.op->reference(args); !s.ok())
      return absl::Status(s.code(), str_cat(n.op->name, " '", n.name, "': ", s.message()));
    for (size_t i = 0; i < n.outputs.size(); ++i) values[n.outputs[i]] = std::move(outs[i]);
    for (ValueId in : n.inputs) {
      if (in != kNoValue && --reads[in] == 0 && g.value(in).kind == ValueKind::node_output)
        values[in] = Tensor();
    }
  }
  std::vector<Tensor> result;
  for (ValueId out : g.outputs()) result.push_back(values[out]);
  return result;
}

}  // namespace collage
