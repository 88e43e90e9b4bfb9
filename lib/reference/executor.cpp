// Sequential interpreter over a graph using reference kernels.
#include "core/str_cat.h"
#include "collage/reference.h"

namespace collage {
namespace {

// An output buffer of type `t`; none (an empty tensor the kernel fills in) when its shape is
// still unknown with every input known: a control-flow operator's, whose shape its body decides.
Tensor allocate(const TensorType& t) {
  return t.is_dynamic() ? Tensor() : Tensor(t.dtype, t.shape);
}

// The kernel's outputs, checked against the inferred types (those it had to make itself).
absl::StatusOr<std::vector<Tensor>> check_outputs(const std::vector<TensorType>& inferred,
                                                  std::vector<Tensor>& outs) {
  for (size_t i = 0; i < outs.size(); ++i)
    if (outs[i].empty() || !type_fits(outs[i].type(), inferred[i]))
      return absl::InternalError(
          str_cat("the kernel left output ", i, outs[i].empty() ? " unset" : " of another type"));
  return std::move(outs);
}

}  // namespace

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
  for (const TensorType& t : ictx.outputs()) outs.push_back(allocate(t));
  KernelArgs args{inputs, outs, attrs};
  if (absl::Status s = op.reference(args); !s.ok()) return s;
  return check_outputs(ictx.outputs(), outs);
}

namespace {

// Whether node n has a value whose shape is known only at run time.
bool touches_dynamic(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (v != kNoValue && g.value(v).type.is_dynamic()) return true;
  for (ValueId v : n.outputs)
    if (g.value(v).type.is_dynamic()) return true;
  return false;
}

// Runs node n of g on `ins`. A node with data-dependent shapes has its outputs' shapes inferred
// from the actual inputs, values included (NonZero's count), and checked against what the graph
// says of them.
absl::StatusOr<std::vector<Tensor>> run_node(const Graph& g, const Node& n,
                                             const std::vector<Tensor>& ins) {
  auto in_node = [&](const absl::Status& s) {
    return absl::Status(s.code(), str_cat(n.op->name, " '", n.name, "': ", s.message()));
  };
  std::vector<Tensor> outs;
  if (!touches_dynamic(g, n)) {
    for (ValueId out : n.outputs)
      outs.emplace_back(g.value(out).type.dtype, g.value(out).type.shape);
    KernelArgs args{ins, outs, *n.attrs};
    if (absl::Status s = n.op->reference(args); !s.ok()) return in_node(s);
    // A control-flow kernel replaces its outputs with its body's results.
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].empty() || outs[i].type() != g.value(n.outputs[i]).type)
        return in_node(absl::InvalidArgumentError(
            str_cat("output ", i, " came out as ",
                    outs[i].empty() ? std::string("nothing") : type_to_string(outs[i].type()),
                    ", the graph says ", type_to_string(g.value(n.outputs[i]).type))));
    return outs;
  }
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> consts;
  for (const Tensor& t : ins) {
    types.push_back(t.empty() ? nullptr : &t.type());
    consts.push_back(t.empty() ? nullptr : &t);
  }
  auto inferred = infer_output_types(*n.op, n.name, *n.attrs, std::move(types), std::move(consts),
                                     static_cast<int>(n.outputs.size()));
  if (!inferred.ok()) return inferred.status();
  if (inferred->size() != n.outputs.size())
    return in_node(absl::InvalidArgumentError(str_cat(
        inferred->size(), " outputs at run time, ", n.outputs.size(), " in the graph")));
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const TensorType& want = g.value(n.outputs[i]).type;
    const TensorType& got = (*inferred)[i];
    if (!type_fits(got, want))
      return in_node(absl::InvalidArgumentError(
          str_cat("output ", i, " is ", type_to_string(got),
                  " at run time, but the graph was compiled for ", type_to_string(want))));
    outs.push_back(allocate(got));
  }
  KernelArgs args{ins, outs, *n.attrs};
  if (absl::Status s = n.op->reference(args); !s.ok()) return in_node(s);
  auto checked = check_outputs(*inferred, outs);
  if (!checked.ok()) return in_node(checked.status());
  return checked;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> run_reference(const Graph& g,
                                                  const std::vector<Tensor>& inputs) {
  if (inputs.size() != g.inputs().size())
    return absl::InvalidArgumentError(str_cat("graph '", g.name(), "' takes ",
                                                   g.inputs().size(), " inputs, ", inputs.size(),
                                                   " given"));
  std::vector<Tensor> values(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    if (!type_fits(inputs[i].type(), v.type))
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
    auto outs = run_node(g, n, ins);
    if (!outs.ok()) return outs.status();
    for (size_t i = 0; i < n.outputs.size(); ++i) values[n.outputs[i]] = std::move((*outs)[i]);
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
