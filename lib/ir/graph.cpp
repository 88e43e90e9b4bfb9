// Graph accessors and the GraphBuilder.
#include "collage/graph.h"

#include <cassert>

#include "core/str_cat.h"

namespace collage {

const Tensor* Graph::constant_of(ValueId id) const {
  if (id < 0 || id >= static_cast<ValueId>(values_.size())) return nullptr;
  const Value& v = values_[id];
  return v.kind == ValueKind::constant ? &constants_[v.constant] : nullptr;
}

const std::vector<std::vector<NodeId>>& Graph::users() const {
  if (!users_) {
    auto u = std::make_shared<std::vector<std::vector<NodeId>>>(values_.size());
    for (NodeId n = 0; n < static_cast<NodeId>(nodes_.size()); ++n) {
      for (ValueId in : nodes_[n].inputs) {
        if (in == kNoValue) continue;
        auto& list = (*u)[in];
        if (list.empty() || list.back() != n) list.push_back(n);
      }
    }
    users_ = u;
  }
  return *users_;
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const Tensor& t : constants_) n += t.numel();
  return n;
}

GraphBuilder::GraphBuilder(const Context& ctx, std::string graph_name) : ctx_(ctx) {
  g_.name_ = std::move(graph_name);
}

std::string GraphBuilder::unique_name(std::string base, bool node) {
  auto& taken = node ? taken_node_names_ : taken_value_names_;
  if (base.empty()) base = node ? "node" : "v";
  auto it = taken.find(base);
  if (it == taken.end()) {
    taken.emplace(base, 0);
    return base;
  }
  for (;;) {
    std::string candidate = str_cat(base, "_", ++it->second);
    if (!taken.count(candidate)) {
      taken.emplace(candidate, 0);
      return candidate;
    }
  }
}

ValueId GraphBuilder::add_input(std::string name, TensorType type) {
  Value v;
  v.name = unique_name(std::move(name), false);
  v.type = std::move(type);
  v.kind = ValueKind::input;
  g_.values_.push_back(std::move(v));
  ValueId id = static_cast<ValueId>(g_.values_.size() - 1);
  g_.inputs_.push_back(id);
  return id;
}

ValueId GraphBuilder::add_constant(std::string name, Tensor value) {
  Value v;
  v.name = unique_name(std::move(name), false);
  v.type = value.type();
  v.kind = ValueKind::constant;
  v.constant = static_cast<int32_t>(g_.constants_.size());
  g_.constants_.push_back(std::move(value));
  g_.values_.push_back(std::move(v));
  return static_cast<ValueId>(g_.values_.size() - 1);
}

absl::StatusOr<std::vector<ValueId>> GraphBuilder::add_node(std::string_view op_name,
                                                            std::vector<ValueId> inputs,
                                                            std::shared_ptr<const OpAttrs> attrs,
                                                            std::string name, int num_outputs) {
  const OpDef* op = ctx_.ops().find(op_name);
  std::string shown = name.empty() ? std::string(op_name) : name;
  if (!op) return absl::NotFoundError(str_cat("unknown operator '", op_name, "' (node '",
                                                   shown, "')"));
  int n = static_cast<int>(inputs.size());
  while (n > op->min_inputs && inputs[n - 1] == kNoValue) --n;
  inputs.resize(n);
  if (n < op->min_inputs || (op->max_inputs >= 0 && n > op->max_inputs)) {
    return absl::InvalidArgumentError(str_cat(
        op_name, " '", shown, "': ", n, " inputs given, expected ", op->min_inputs,
        op->max_inputs < 0 ? " or more"
                           : (op->max_inputs == op->min_inputs ? ""
                                                               : str_cat("..", op->max_inputs))));
  }
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> consts;
  for (int i = 0; i < n; ++i) {
    ValueId in = inputs[i];
    if (in == kNoValue) {
      if (i < op->min_inputs)
        return absl::InvalidArgumentError(
            str_cat(op_name, " '", shown, "': required input ", i, " is missing"));
      types.push_back(nullptr);
      consts.push_back(nullptr);
      continue;
    }
    if (in < 0 || in >= static_cast<ValueId>(g_.values_.size()))
      return absl::InvalidArgumentError(
          str_cat(op_name, " '", shown, "': input ", i, " refers to no value"));
    types.push_back(&g_.values_[in].type);
    consts.push_back(g_.constant_of(in));
  }
  for (int c : op->constant_inputs) {
    if (c < n && inputs[c] != kNoValue && !consts[c])
      return absl::InvalidArgumentError(str_cat(op_name, " '", shown, "': input ", c, " ('",
                                                     g_.values_[inputs[c]].name,
                                                     "') must be a compile-time constant"));
  }
  if (!attrs) attrs = std::shared_ptr<const OpAttrs>(op->make_attrs());
  auto inferred =
      infer_output_types(*op, shown, *attrs, std::move(types), std::move(consts), num_outputs);
  if (!inferred.ok()) return inferred.status();
  for (size_t i = 0; i < inferred->size(); ++i) {
    const TensorType& t = (*inferred)[i];
    if (t.is_dynamic()) continue;
    auto n = checked_shape_numel(t.shape);
    int64_t bytes;
    if (!n || __builtin_mul_overflow(*n, static_cast<int64_t>(dtype_size(t.dtype)), &bytes))
      return absl::InvalidArgumentError(str_cat(op_name, " '", shown, "': output ", i,
                                                " has an invalid or too large shape ",
                                                shape_to_string(t.shape)));
  }

  Node node;
  node.name = unique_name(name.empty() ? str_cat(op_name, "_", g_.nodes_.size()) : name, true);
  node.op = op;
  node.attrs = std::move(attrs);
  node.inputs = std::move(inputs);
  NodeId nid = static_cast<NodeId>(g_.nodes_.size());
  std::vector<ValueId> outs;
  for (size_t i = 0; i < inferred->size(); ++i) {
    Value v;
    v.name = unique_name(inferred->size() == 1 ? node.name : str_cat(node.name, ":", i), false);
    v.type = std::move((*inferred)[i]);
    v.kind = ValueKind::node_output;
    v.producer = nid;
    v.output_index = static_cast<int>(i);
    g_.values_.push_back(std::move(v));
    outs.push_back(static_cast<ValueId>(g_.values_.size() - 1));
  }
  node.outputs = outs;
  g_.nodes_.push_back(std::move(node));
  return outs;
}

absl::StatusOr<ValueId> GraphBuilder::add(std::string_view op, std::vector<ValueId> inputs,
                                          std::shared_ptr<const OpAttrs> attrs, std::string name) {
  auto outs = add_node(op, std::move(inputs), std::move(attrs), std::move(name), 1);
  if (!outs.ok()) return outs.status();
  return outs->front();
}

void GraphBuilder::add_output(ValueId v) {
  assert(v >= 0 && v < static_cast<ValueId>(g_.values_.size()));
  g_.outputs_.push_back(v);
}

void GraphBuilder::set_value_name(ValueId v, std::string name) {
  std::string& cur = g_.values_[v].name;
  if (cur == name) return;
  cur = unique_name(std::move(name), false);
}

void GraphBuilder::set_layout(ValueId v, Layout layout) {
  assert(v >= 0 && v < static_cast<ValueId>(g_.values_.size()));
  g_.values_[v].layout = layout;
}

absl::StatusOr<Graph> GraphBuilder::finish() {
  if (absl::Status s = verify_graph(ctx_, g_); !s.ok()) return s;
  Graph out = std::move(g_);
  g_ = Graph();
  taken_node_names_.clear();
  taken_value_names_.clear();
  return out;
}

}  // namespace collage
