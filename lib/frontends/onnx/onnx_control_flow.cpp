// ONNX If, Loop and Scan. What can be decided at import is: an If whose condition is a constant
// (exporters derive many from shapes) becomes its branch's nodes; a Loop with a constant trip
// count and no run-time condition, and a Scan over a sequence of known length, are unrolled when
// small (kMaxUnrolledIterations, kMaxUnrolledNodes), so that every backend and the runtime see
// plain nodes. Anything else becomes an If, Loop or Scan node whose bodies are graphs (the outer
// values they read appended to its inputs), run by the reference executor and, placed, by the
// dynamic runtime module (runtime/modules/dynamic/dyn_control_flow.h).
#include <algorithm>
#include <map>
#include <set>

#include "collage/ops/control_flow.h"
#include "core/str_cat.h"
#include "frontends/onnx/onnx_graph.h"

namespace collage::onnx_import {
namespace {

constexpr int64_t kMaxUnrolledIterations = 64;
constexpr int64_t kMaxUnrolledNodes = 4096;

template <typename F>
void for_each_subgraph(const onnx::GraphProto& g, F&& f) {
  for (const onnx::NodeProto& n : g.node())
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) f(a.g());
      for (const onnx::GraphProto& sub : a.graphs()) f(sub);
    }
}

// Every name `g` defines (graph inputs, initializers, node outputs), its bodies' included.
void collect_defined(const onnx::GraphProto& g, std::set<std::string>& out) {
  for (const auto& vi : g.input()) out.insert(vi.name());
  for (const auto& t : g.initializer()) out.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (!o.empty()) out.insert(o);
  for_each_subgraph(g, [&](const onnx::GraphProto& sub) { collect_defined(sub, out); });
}

// Every name `g` reads (node inputs, graph outputs), its bodies' included.
void collect_read(const onnx::GraphProto& g, std::set<std::string>& out) {
  for (const auto& n : g.node())
    for (const auto& i : n.input())
      if (!i.empty()) out.insert(i);
  for (const auto& vi : g.output()) out.insert(vi.name());
  for_each_subgraph(g, [&](const onnx::GraphProto& sub) { collect_read(sub, out); });
}

// The outer names a body reads, in name order.
std::vector<std::string> outer_names(const onnx::GraphProto& g) {
  std::set<std::string> defined, read;
  collect_defined(g, defined);
  collect_read(g, read);
  std::vector<std::string> out;
  for (const std::string& r : read)
    if (!defined.count(r)) out.push_back(r);
  return out;
}

void rename_all(onnx::GraphProto& g, const std::map<std::string, std::string>& names) {
  auto rename = [&](std::string* s) {
    auto it = names.find(*s);
    if (it != names.end()) *s = it->second;
  };
  for (auto& vi : *g.mutable_input()) rename(vi.mutable_name());
  for (auto& vi : *g.mutable_output()) rename(vi.mutable_name());
  for (auto& t : *g.mutable_initializer()) rename(t.mutable_name());
  for (auto& n : *g.mutable_node()) {
    for (auto& i : *n.mutable_input()) rename(&i);
    for (auto& o : *n.mutable_output()) rename(&o);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_all(*a.mutable_g(), names);
      for (auto& sub : *a.mutable_graphs()) rename_all(sub, names);
    }
  }
}

int64_t node_count(const onnx::GraphProto& g) {
  int64_t n = g.node_size();
  for_each_subgraph(g, [&](const onnx::GraphProto& sub) { n += node_count(sub); });
  return n;
}

const onnx::GraphProto* graph_attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::GRAPH) return &a.g();
  return nullptr;
}

const onnx::AttributeProto* attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::vector<int64_t> ints_attr(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* a = attr(node, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

int64_t entry(const std::vector<int64_t>& v, size_t i) { return i < v.size() ? v[i] : 0; }

Ref constant_ref(Tensor t, std::string name) {
  TensorType type = t.type();
  return Ref{kNoValue, std::move(t), std::move(type), std::move(name)};
}

Tensor bool_scalar(bool v) {
  Tensor t(DType::boolean, {});
  t.data<uint8_t>()[0] = v;
  return t;
}

// Widens `formal[first + i]` to what body output `out_first + i` also holds (a dimension the two
// disagree on becomes dynamic); true when one changed. A loop-carried value or scan state may
// change size between iterations (a growing token list): the body is then imported again with
// the wider types, so that each iteration's value fits its inputs.
bool widen_carried(const Graph& body, size_t out_first, size_t count, size_t first,
                   std::vector<TensorType>& formal) {
  bool changed = false;
  for (size_t i = 0; i < count; ++i) {
    TensorType& t = formal[first + i];
    const TensorType& out = body.value(body.outputs()[out_first + i]).type;
    if (out.dtype != t.dtype || out.shape.size() != t.shape.size()) continue;
    for (size_t d = 0; d < t.shape.size(); ++d)
      if (t.shape[d] != kDynamicDim && out.shape[d] != t.shape[d]) {
        t.shape[d] = kDynamicDim;
        changed = true;
      }
  }
  return changed;
}

// Rounds of widening before the body's types are taken as they are (each round makes at least
// one more dimension dynamic; a few suffice for real loops).
constexpr int kWideningRounds = 4;

}  // namespace

absl::Status GraphImporter::import_control_flow(const onnx::NodeProto& node,
                                                const std::string& shown,
                                                const std::vector<Ref*>& inputs) {
  if (node.op_type() == "If") return import_if(node, shown, inputs);
  if (node.op_type() == "Loop") return import_loop(node, shown, inputs);
  return import_scan(node, shown, inputs);
}

absl::Status GraphImporter::inline_body(const onnx::GraphProto& body,
                                        const std::vector<Ref>& formal, const std::string& prefix,
                                        std::vector<Ref>* outputs) {
  onnx::GraphProto g = body;
  std::set<std::string> defined;
  collect_defined(g, defined);
  std::map<std::string, std::string> names;
  for (const std::string& d : defined) names[d] = prefix + d;
  rename_all(g, names);
  if (g.input_size() != static_cast<int>(formal.size()))
    return absl::InvalidArgumentError(str_cat("it has ", g.input_size(),
                                              " graph inputs, the operator gives it ",
                                              formal.size()));
  for (int k = 0; k < g.input_size(); ++k) {
    Ref r = formal[k];
    r.name = g.input(k).name();
    refs_[r.name] = std::move(r);
  }
  for (const onnx::TensorProto& t : g.initializer()) {
    auto v = tensor_from_proto(t, source_);
    if (!v.ok()) return v.status();
    refs_[t.name()] = constant_ref(std::move(*v), t.name());
  }
  std::set<std::string> read;
  collect_read(g, read);
  used_names_.insert(read.begin(), read.end());
  for (int i = 0; i < g.node_size(); ++i)
    if (absl::Status s = import_node(g.node(i), i); !s.ok()) return s;
  for (const auto& vi : g.output()) {
    auto r = lookup(vi.name());
    if (!r.ok()) return r.status();
    if (!*r)
      return absl::InvalidArgumentError(
          str_cat("output '", vi.name(), "' is produced by none of its nodes"));
    outputs->push_back(**r);
  }
  return absl::OkStatus();
}

absl::StatusOr<Graph> GraphImporter::import_body(const onnx::GraphProto& body,
                                                 const std::vector<TensorType>& formal,
                                                 const std::vector<std::string>& captured,
                                                 const std::string& label) {
  onnx::GraphProto copy = body;
  GraphImporter child(ctx_, copy, opset_, options_, source_, this);
  auto g = child.run_body(formal, captured);
  if (!g.ok()) return absl::Status(g.status().code(), str_cat(label, ": ", g.status().message()));
  return g;
}

absl::StatusOr<Ref> GraphImporter::stack_refs(std::vector<Ref>& values, int64_t axis,
                                              const std::string& name) {
  std::vector<Ref> parts;
  for (size_t i = 0; i < values.size(); ++i) {
    auto u = emit("Unsqueeze", {&values[i]}, {{"axes", std::vector<int64_t>{axis}}},
                  pick_node_name(str_cat(name, "/unsqueeze"), {}, 1), {}, 1);
    if (!u.ok()) return u.status();
    parts.push_back(std::move(u->front()));
  }
  std::vector<Ref*> ins;
  for (Ref& p : parts) ins.push_back(&p);
  auto c = emit("Concat", ins, {{"axis", axis}}, pick_node_name(str_cat(name, "/concat"), {}, 1),
                {}, 1);
  if (!c.ok()) return c.status();
  return std::move(c->front());
}

absl::StatusOr<int64_t> GraphImporter::append_captured(const std::vector<std::string>& captured,
                                                       std::vector<Ref*>& ins) {
  int64_t count = 0;
  for (const std::string& name : captured) {
    auto r = lookup(name);
    if (!r.ok()) return r.status();
    if (*r && !(*r)->is_constant()) {
      ins.push_back(*r);
      ++count;
    }
  }
  return count;
}

absl::Status GraphImporter::emit_control_flow(const onnx::NodeProto& node,
                                              const std::string& shown, std::string_view op,
                                              const std::vector<Ref*>& ins,
                                              std::shared_ptr<OpAttrs> attrs) {
  std::vector<std::string> outs(node.output().begin(), node.output().end());
  auto results = emit_with(op, ins, std::move(attrs),
                           pick_node_name(shown, outs, node.output_size()), outs,
                           node.output_size());
  if (!results.ok()) return results.status();
  return bind_outputs(node, shown, std::move(*results));
}

absl::Status GraphImporter::import_if(const onnx::NodeProto& node, const std::string& shown,
                                      const std::vector<Ref*>& inputs) {
  const std::string who = str_cat("If '", shown, "'");
  const onnx::GraphProto* then_g = graph_attr(node, "then_branch");
  const onnx::GraphProto* else_g = graph_attr(node, "else_branch");
  if (!then_g || !else_g || inputs.size() != 1 || !inputs[0])
    return absl::InvalidArgumentError(
        str_cat(who, ": needs one input (cond) and the graphs then_branch and else_branch"));
  const Ref& cond = *inputs[0];
  if (cond.type.numel() != 1 || cond.type.dtype != DType::boolean)
    return absl::InvalidArgumentError(
        str_cat(who, ": cond must be one bool, got ", type_to_string(cond.type)));
  if (cond.is_constant()) {
    const bool taken = cond.constant.get_as_double(0) != 0;
    std::vector<Ref> results;
    absl::Status s = inline_body(taken ? *then_g : *else_g, {},
                                 str_cat(shown, taken ? "/then/" : "/else/"), &results);
    if (!s.ok())
      return absl::Status(s.code(), str_cat(who, ": ", taken ? "then" : "else", "_branch: ",
                                            s.message()));
    return bind_outputs(node, shown, std::move(results));
  }
  std::set<std::string> names;
  for (const onnx::GraphProto* g : {then_g, else_g})
    for (const std::string& n : outer_names(*g)) names.insert(n);
  const std::vector<std::string> captured(names.begin(), names.end());
  auto then_body = import_body(*then_g, {}, captured, str_cat(who, ": then_branch"));
  if (!then_body.ok()) return then_body.status();
  auto else_body = import_body(*else_g, {}, captured, str_cat(who, ": else_branch"));
  if (!else_body.ok()) return else_body.status();
  auto a = std::make_shared<IfAttrs>();
  a->then_branch = std::make_shared<const Graph>(std::move(*then_body));
  a->else_branch = std::make_shared<const Graph>(std::move(*else_body));
  std::vector<Ref*> ins{inputs[0]};
  if (auto n = append_captured(captured, ins); !n.ok()) return n.status();
  return emit_control_flow(node, shown, "If", ins, std::move(a));
}

absl::Status GraphImporter::import_loop(const onnx::NodeProto& node, const std::string& shown,
                                        const std::vector<Ref*>& inputs) {
  const std::string who = str_cat("Loop '", shown, "'");
  const onnx::GraphProto* body = graph_attr(node, "body");
  if (!body || inputs.size() < 2)
    return absl::InvalidArgumentError(
        str_cat(who, ": needs inputs M and cond (either may be empty) and the graph body"));
  Ref* trips = inputs[0];
  Ref* cond = inputs[1];
  const auto carried = static_cast<int64_t>(inputs.size()) - 2;
  for (int64_t i = 0; i < carried; ++i)
    if (!inputs[2 + i])
      return absl::InvalidArgumentError(str_cat(who, ": loop-carried input ", i, " is empty"));
  if (body->input_size() != 2 + carried || body->output_size() < 1 + carried)
    return absl::InvalidArgumentError(
        str_cat(who, ": the body takes ", body->input_size(), " inputs and gives ",
                body->output_size(), " outputs for ", carried, " loop-carried values"));
  const int64_t scans = body->output_size() - 1 - carried;
  // Unrolled: a constant trip count, a condition that is absent (the body's is then ignored) or
  // a constant true the body passes through, and a small body.
  if ((trips && (trips->type.dtype != DType::i64 || trips->type.numel() != 1)) ||
      (cond && (cond->type.dtype != DType::boolean || cond->type.numel() != 1)))
    return absl::InvalidArgumentError(str_cat(who, ": M must be one i64 and cond one bool"));
  const bool cond_fixed =
      !cond || (cond->is_constant() && cond->constant.get_as_double(0) != 0 &&
                body->output(0).name() == body->input(1).name());
  const int64_t n = trips && trips->is_constant() ? trips->constant.get_as_int64(0) : -1;
  if (cond_fixed && n >= 1 && n <= kMaxUnrolledIterations &&
      n * node_count(*body) <= kMaxUnrolledNodes) {
    std::vector<Ref> state;
    for (int64_t i = 0; i < carried; ++i) state.push_back(*inputs[2 + i]);
    std::vector<std::vector<Ref>> stacked(scans);
    for (int64_t it = 0; it < n; ++it) {
      std::vector<Ref> formal{constant_ref(Tensor::scalar_i64(it), "iteration"),
                              constant_ref(bool_scalar(true), "cond")};
      formal.insert(formal.end(), state.begin(), state.end());
      std::vector<Ref> out;
      absl::Status s = inline_body(*body, formal, str_cat(shown, "/", it, "/"), &out);
      if (!s.ok())
        return absl::Status(s.code(), str_cat(who, ": iteration ", it, ": ", s.message()));
      for (int64_t c = 0; c < carried; ++c) state[c] = out[1 + c];
      for (int64_t k = 0; k < scans; ++k) stacked[k].push_back(out[1 + carried + k]);
    }
    std::vector<Ref> results = state;
    for (int64_t k = 0; k < scans; ++k) {
      auto r = stack_refs(stacked[k], 0, str_cat(shown, "/scan", k));
      if (!r.ok()) return r.status();
      results.push_back(std::move(*r));
    }
    return bind_outputs(node, shown, std::move(results));
  }
  std::vector<TensorType> formal{{DType::i64, {}}, {DType::boolean, {}}};
  for (int64_t i = 0; i < carried; ++i) formal.push_back(inputs[2 + i]->type);
  const std::vector<std::string> captured = outer_names(*body);
  auto g = import_body(*body, formal, captured, str_cat(who, ": body"));
  for (int round = 0; g.ok() && round < kWideningRounds &&
                      widen_carried(*g, 1, static_cast<size_t>(carried), 2, formal);
       ++round)
    g = import_body(*body, formal, captured, str_cat(who, ": body"));
  if (!g.ok()) return g.status();
  auto a = std::make_shared<LoopAttrs>();
  a->body = std::make_shared<const Graph>(std::move(*g));
  std::vector<Ref*> ins(inputs.begin(), inputs.end());
  auto num_captured = append_captured(captured, ins);
  if (!num_captured.ok()) return num_captured.status();
  a->num_captured = *num_captured;
  return emit_control_flow(node, shown, "Loop", ins, std::move(a));
}

absl::Status GraphImporter::import_scan(const onnx::NodeProto& node, const std::string& shown,
                                        const std::vector<Ref*>& inputs) {
  const std::string who = str_cat("Scan '", shown, "'");
  const onnx::GraphProto* body = graph_attr(node, "body");
  const onnx::AttributeProto* count = attr(node, "num_scan_inputs");
  if (!body || !count || count->i() < 1 || count->i() > static_cast<int64_t>(inputs.size()))
    return absl::InvalidArgumentError(
        str_cat(who, ": needs the graph body and num_scan_inputs between 1 and its ",
                inputs.size(), " inputs"));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i]) return absl::InvalidArgumentError(str_cat(who, ": input ", i, " is empty"));
  const int64_t num_scan = count->i();
  const int64_t states = static_cast<int64_t>(inputs.size()) - num_scan;
  const std::vector<int64_t> in_axes = ints_attr(node, "scan_input_axes");
  const std::vector<int64_t> in_dirs = ints_attr(node, "scan_input_directions");
  const std::vector<int64_t> out_axes = ints_attr(node, "scan_output_axes");
  const std::vector<int64_t> out_dirs = ints_attr(node, "scan_output_directions");
  if (body->input_size() != static_cast<int>(inputs.size()) || body->output_size() < states)
    return absl::InvalidArgumentError(str_cat(who, ": the body takes ", body->input_size(),
                                              " inputs and gives ", body->output_size(),
                                              " outputs for ", inputs.size(), " node inputs"));
  const int64_t scan_outputs = body->output_size() - states;
  // The slice each scan input gives per step, and the common length.
  std::vector<TensorType> formal;
  for (int64_t i = 0; i < states; ++i) formal.push_back(inputs[i]->type);
  std::vector<int64_t> axes;
  int64_t length = -1;
  for (int64_t i = 0; i < num_scan; ++i) {
    TensorType t = inputs[states + i]->type;
    const auto rank = static_cast<int64_t>(t.shape.size());
    int64_t axis = entry(in_axes, i);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
      return absl::InvalidArgumentError(
          str_cat(who, ": scan input ", i, " has no axis ", entry(in_axes, i)));
    axes.push_back(axis);
    const int64_t len = t.shape[axis];
    if (length >= 0 && len != length)
      return absl::InvalidArgumentError(
          str_cat(who, ": scan inputs of lengths ", length, " and ", len));
    length = len;
    t.shape.erase(t.shape.begin() + axis);
    formal.push_back(std::move(t));
  }
  if (length >= 1 && length <= kMaxUnrolledIterations &&
      length * node_count(*body) <= kMaxUnrolledNodes) {
    std::vector<Ref> state;
    for (int64_t i = 0; i < states; ++i) state.push_back(*inputs[i]);
    std::vector<std::vector<Ref>> stacked(scan_outputs);
    for (int64_t t = 0; t < length; ++t) {
      std::vector<Ref> step = state;
      for (int64_t i = 0; i < num_scan; ++i) {
        Ref index = constant_ref(Tensor::scalar_i64(entry(in_dirs, i) ? length - 1 - t : t),
                                 str_cat(shown, "/index"));
        auto slice = emit("Gather", {inputs[states + i], &index}, {{"axis", axes[i]}},
                          pick_node_name(str_cat(shown, "/slice", i), {}, 1), {}, 1);
        if (!slice.ok()) return slice.status();
        step.push_back(std::move(slice->front()));
      }
      std::vector<Ref> out;
      absl::Status s = inline_body(*body, step, str_cat(shown, "/", t, "/"), &out);
      if (!s.ok()) return absl::Status(s.code(), str_cat(who, ": step ", t, ": ", s.message()));
      for (int64_t i = 0; i < states; ++i) state[i] = out[i];
      for (int64_t k = 0; k < scan_outputs; ++k) stacked[k].push_back(out[states + k]);
    }
    std::vector<Ref> results = state;
    for (int64_t k = 0; k < scan_outputs; ++k) {
      if (entry(out_dirs, k)) std::reverse(stacked[k].begin(), stacked[k].end());
      const auto rank = static_cast<int64_t>(stacked[k].front().type.shape.size()) + 1;
      int64_t axis = entry(out_axes, k);
      if (axis < 0) axis += rank;
      auto r = stack_refs(stacked[k], axis, str_cat(shown, "/scan", k));
      if (!r.ok()) return r.status();
      results.push_back(std::move(*r));
    }
    return bind_outputs(node, shown, std::move(results));
  }
  const std::vector<std::string> captured = outer_names(*body);
  auto g = import_body(*body, formal, captured, str_cat(who, ": body"));
  for (int round = 0; g.ok() && round < kWideningRounds &&
                      widen_carried(*g, 0, static_cast<size_t>(states), 0, formal);
       ++round)
    g = import_body(*body, formal, captured, str_cat(who, ": body"));
  if (!g.ok()) return g.status();
  auto a = std::make_shared<ScanAttrs>();
  a->body = std::make_shared<const Graph>(std::move(*g));
  a->num_scan_inputs = num_scan;
  a->scan_input_axes = in_axes;
  a->scan_input_directions = in_dirs;
  a->scan_output_axes = out_axes;
  a->scan_output_directions = out_dirs;
  std::vector<Ref*> ins(inputs.begin(), inputs.end());
  auto num_captured = append_captured(captured, ins);
  if (!num_captured.ok()) return num_captured.status();
  a->num_captured = *num_captured;
  return emit_control_flow(node, shown, "Scan", ins, std::move(a));
}

}  // namespace collage::onnx_import
