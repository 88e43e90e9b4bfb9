// lower_group: TE computes per node, anchor or default schedule, lowering with fallbacks.
#include "backends/native/native_lower.h"

#include <functional>
#include <optional>
#include <string>

#include "collage/jit.h"
#include "core/str_cat.h"
#include "te_ops/default_schedule.h"
#include "te_ops/layout_views.h"
#include "te_ops/te_op_util.h"

namespace collage::native {
namespace {

bool contains(const std::vector<te::Tensor>& ts, const te::Tensor& t) {
  for (const te::Tensor& o : ts)
    if (o.same_as(t)) return true;
  return false;
}

// Placeholders reachable from `roots` through compute bodies, not looking behind `stop`.
std::vector<te::Tensor> reachable_placeholders(const std::vector<te::Tensor>& roots,
                                               const std::vector<te::Tensor>& stop) {
  std::vector<te::Tensor> seen, found;
  std::function<void(const te::Tensor&)> walk = [&](const te::Tensor& t) {
    if (contains(seen, t)) return;
    seen.push_back(t);
    if (t.op_kind() == te::OpKind::placeholder) {
      found.push_back(t);
      return;
    }
    for (const te::Tensor& in : te::input_tensors(t))
      if (!contains(stop, in)) walk(in);
  };
  for (const te::Tensor& r : roots) walk(r);
  return found;
}

int64_t find_parallel_extent(const te::Stmt& s) {
  struct Finder : te::IRVisitor {
    int64_t extent = 0;
    void visit_For(const te::ForNode& n, const te::Stmt& st) override {
      if (n.for_kind == te::ForKind::parallel && extent == 0)
        extent = te::as_const_int(n.extent).value_or(1);
      te::IRVisitor::visit_For(n, st);
    }
  } f;
  f.visit(s);
  return f.extent;
}

// The TE form of a group: a tensor per value, the kernel's input placeholders in argument order.
struct GroupTensors {
  std::vector<te::Tensor> of_value;
  std::vector<te::Tensor> inputs;     // one per group input
  std::vector<te::Tensor> constants;  // placeholders of the group's constants
  std::vector<ValueId> constant_values;
  std::vector<te::Tensor> outputs;    // one per group output
  NodeId anchor = -1;
  const te_ops::TeOpDef* anchor_def = nullptr;
  int anchors = 0;
};

// Element types the generated code handles (strings are the reference executor's only).
bool generated_code_type(DType t) {
  return t != DType::str;
}

// The first intrinsic call in the tensors `outs` compute (back to `ins`) that generated code
// cannot compute for its type, so that the node is refused when claimed, not when built.
std::optional<std::string> ungenerated_call(const std::vector<te::Tensor>& outs,
                                            const std::vector<te::Tensor>& ins) {
  struct Finder : te::ExprVisitor {
    std::optional<std::string> found;
    void visit_Call(const te::CallNode& n, const te::Expr& e) override {
      if (!found && !codegen::generates_intrinsic(n.op, n.dtype))
        found = str_cat(te::intrinsic_name(n.op), " on ", dtype_name(n.dtype), " values");
      te::ExprVisitor::visit_Call(n, e);
    }
  } finder;
  std::vector<te::Tensor> seen;
  std::function<void(const te::Tensor&)> walk = [&](const te::Tensor& t) {
    if (finder.found || contains(seen, t) || contains(ins, t)) return;
    seen.push_back(t);
    if (t.op_kind() == te::OpKind::placeholder) return;
    finder.visit(t->body);
    for (const te::Tensor& in : te::input_tensors(t)) walk(in);
  };
  for (const te::Tensor& t : outs) walk(t);
  return finder.found;
}

absl::Status compute_node(const Graph& g, const Node& node, const te_ops::TeOpRegistry& ops,
                          std::vector<te::Tensor>& of_value) {
  for (const auto* list : {&node.inputs, &node.outputs})
    for (ValueId v : *list)
      if (v != kNoValue && !generated_code_type(g.value(v).type.dtype))
        return te_ops::node_error(node, str_cat("the native backend does not generate code for ",
                                                dtype_name(g.value(v).type.dtype), " values"));
  const te_ops::TeOpDef* def = ops.find(node.op_name());
  if (!def || !def->compute)
    return te_ops::node_error(node, "the native backend has no tensor expression for this operator");
  std::vector<te::Tensor> ins;
  for (ValueId v : node.inputs) ins.push_back(v == kNoValue ? te::Tensor() : of_value[v]);
  auto outs = def->compute(g, node, ins);
  if (!outs.ok()) return outs.status();
  if (outs->size() != node.outputs.size())
    return te_ops::node_error(node, str_cat("the tensor expression gives ", outs->size(),
                                            " outputs, the node has ", node.outputs.size()));
  for (size_t o = 0; o < outs->size(); ++o) {
    const TensorType& want = g.value(node.outputs[o]).type;
    const te::Tensor& t = (*outs)[o];
    if (!t.defined() || t.shape() != want.shape || t.dtype() != want.dtype)
      return te_ops::node_error(
          node, str_cat("the tensor expression of output ", o, " has type ",
                        t.defined() ? type_to_string({t.dtype(), t.shape()}) : "<none>",
                        ", the node's is ", type_to_string(want)));
    of_value[node.outputs[o]] = t;
  }
  if (std::optional<std::string> call = ungenerated_call(*outs, ins))
    return te_ops::node_error(node,
                              str_cat("the native backend does not generate code for ", *call));
  return absl::OkStatus();
}

absl::StatusOr<GroupTensors> build_tensors(const Graph& g, const te_ops::TeOpRegistry& ops) {
  GroupTensors gt;
  gt.of_value.resize(g.values().size());
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    const TensorType& t = v.type;
    // A blocked input is the kernel argument in its stored order, read through a logical view
    // that schedules inline.
    gt.inputs.push_back(te::placeholder(te_ops::stored_shape(t.shape, v.layout), t.dtype,
                                        str_cat("arg", i)));
    gt.of_value[g.inputs()[i]] =
        v.layout.plain() ? gt.inputs.back() : te_ops::logical_view(gt.inputs.back(), v.layout);
  }
  for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v) {
    if (g.value(v).kind != ValueKind::constant) continue;
    const TensorType& t = g.value(v).type;
    gt.constants.push_back(te::placeholder(t.shape, t.dtype, str_cat("const", gt.constants.size())));
    gt.constant_values.push_back(v);
    gt.of_value[v] = gt.constants.back();
  }
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
    const Node& node = g.node(n);
    if (absl::Status s = compute_node(g, node, ops, gt.of_value); !s.ok()) return s;
    const te_ops::TeOpDef* def = ops.find(node.op_name());
    if (def->schedule) {
      ++gt.anchors;
      if (gt.anchor < 0) {
        gt.anchor = n;
        gt.anchor_def = def;
      }
    }
  }
  for (ValueId v : g.outputs()) {
    te::Tensor t = gt.of_value[v];
    if (!t.defined()) return absl::InvalidArgumentError(str_cat("group output '", g.value(v).name, "' has no producer"));
    const Layout& layout = g.value(v).layout;
    if (!layout.plain()) {
      // Stored blocked: the output stage writes the logical result in that order.
      gt.outputs.push_back(te_ops::stored_view(t, layout, str_cat("out", gt.outputs.size())));
      continue;
    }
    // An output must be its own stage: copy a placeholder or a tensor already listed.
    if (t.op_kind() == te::OpKind::placeholder || contains(gt.outputs, t))
      t = te::compute(
          t.shape(),
          [t](const std::vector<te::Var>& i) { return t(std::vector<te::Expr>(i.begin(), i.end())); },
          str_cat("out", gt.outputs.size()));
    gt.outputs.push_back(t);
  }
  return gt;
}

struct Scheduled {
  te::Schedule schedule;
  std::vector<te::Tensor> prepacked;
  std::string name;
};

absl::StatusOr<LoweredGroup> lower_scheduled(const GroupTensors& gt, const Scheduled& sc,
                                             const std::string& symbol) {
  LoweredGroup out;
  std::vector<te::Tensor> read = reachable_placeholders(gt.outputs, sc.prepacked);
  // Inputs nothing reads (Shape's) are not tensors of the schedule: they become parameters of
  // the lowered function afterwards.
  std::vector<te::Tensor> args;
  std::vector<size_t> unread;
  for (size_t i = 0; i < gt.inputs.size(); ++i) {
    if (contains(read, gt.inputs[i]))
      args.push_back(gt.inputs[i]);
    else
      unread.push_back(i);
  }
  args.insert(args.end(), gt.outputs.begin(), gt.outputs.end());
  for (size_t c = 0; c < gt.constants.size(); ++c) {
    if (!contains(read, gt.constants[c])) continue;
    args.push_back(gt.constants[c]);
    ConstantArg a;
    a.value = gt.constant_values[c];
    a.type = {gt.constants[c].dtype(), gt.constants[c].shape()};
    out.constants.push_back(a);
  }
  for (size_t p = 0; p < sc.prepacked.size(); ++p) {
    const te::Tensor& packed = sc.prepacked[p];
    std::vector<te::Tensor> sources = reachable_placeholders({packed}, {});
    ConstantArg a;
    a.pack = static_cast<int>(p);
    a.type = {packed.dtype(), packed.shape()};
    for (const te::Tensor& src : sources) {
      size_t c = 0;
      while (c < gt.constants.size() && !gt.constants[c].same_as(src)) ++c;
      if (c == gt.constants.size())
        return absl::InvalidArgumentError(str_cat("pre-packed tensor '", packed.name(),
                                                  "' reads '", src.name(), "', which is no constant"));
      a.pack_inputs.push_back(gt.constant_values[c]);
    }
    std::vector<te::Tensor> pack_args = sources;
    pack_args.push_back(packed);
    auto f = te::lower_pack(sc.schedule, packed, pack_args, str_cat(symbol, "_pack", p));
    if (!f.ok()) return f.status();
    out.packs.push_back(std::move(*f));
    args.push_back(packed);
    out.constants.push_back(std::move(a));
  }
  auto f = te::lower(sc.schedule, args, symbol);
  if (!f.ok()) return f.status();
  out.kernel = std::move(*f);
  for (size_t i : unread)
    out.kernel.params.insert(out.kernel.params.begin() + static_cast<std::ptrdiff_t>(i),
                             te::Buffer(gt.inputs[i].name(), gt.inputs[i].dtype(), gt.inputs[i].shape()));
  out.parallel_extent = find_parallel_extent(out.kernel.body);
  out.schedule = sc.name;
  return out;
}

}  // namespace

absl::Status check_node_supported(const Graph& g, const Node& node,
                                  const te_ops::TeOpRegistry& ops) {
  std::vector<te::Tensor> of_value(g.values().size());
  for (ValueId v : node.inputs)
    if (v != kNoValue)
      of_value[v] = te::placeholder(g.value(v).type.shape, g.value(v).type.dtype, "in");
  return compute_node(g, node, ops, of_value);
}

absl::StatusOr<LoweredGroup> lower_group(const Graph& group, const te_ops::TeOpRegistry& ops,
                                         const LowerOptions& options, const std::string& symbol) {
  if (group.nodes().empty()) return absl::InvalidArgumentError("native: empty group");
  auto gt = build_tensors(group, ops);
  if (!gt.ok()) return gt.status();

  absl::Status first_error;
  if (gt->anchors == 1) {
    te_ops::AnchorGroup ag;
    ag.graph = &group;
    ag.anchor = gt->anchor;
    ag.anchor_output = gt->of_value[group.node(gt->anchor).outputs[0]];
    ag.outputs = gt->outputs;
    ag.inputs = gt->inputs;
    ag.input_is_constant.assign(gt->inputs.size(), false);
    ag.inputs.insert(ag.inputs.end(), gt->constants.begin(), gt->constants.end());
    ag.input_is_constant.resize(ag.inputs.size(), true);
    ag.target = options.target;
    ag.num_threads = options.num_threads;
    ag.tuning = options.tuning;
    auto sg = gt->anchor_def->schedule(ag);
    if (sg.ok()) {
      auto lowered = lower_scheduled(
          *gt, {std::move(sg->schedule), std::move(sg->prepacked),
                str_cat("anchor ", group.node(gt->anchor).op_name())},
          symbol);
      if (lowered.ok()) return lowered;
      first_error = lowered.status();
    } else {
      first_error = sg.status();
    }
  }
  for (te_ops::ScheduleLevel level : {te_ops::ScheduleLevel::full, te_ops::ScheduleLevel::serial,
                                      te_ops::ScheduleLevel::plain}) {
    te_ops::DefaultScheduleOptions so{options.target, options.num_threads, level};
    const char* name = level == te_ops::ScheduleLevel::full     ? "default"
                       : level == te_ops::ScheduleLevel::serial ? "default-serial"
                                                                : "plain";
    auto lowered = lower_scheduled(*gt, {te_ops::default_schedule(gt->outputs, so), {}, name}, symbol);
    if (lowered.ok()) return lowered;
    if (first_error.ok()) first_error = lowered.status();
  }
  return absl::InvalidArgumentError(
      str_cat("native: group '", group.name(), "' cannot be lowered: ", first_error.message()));
}

}  // namespace collage::native
