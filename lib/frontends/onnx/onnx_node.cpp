// NodeContext: input, attribute and output helpers shared by the operator conversions.
#include "frontends/onnx/onnx_node.h"

#include <algorithm>

#include "core/str_cat.h"

namespace collage::onnx_import {

NodeContext::NodeContext(GraphImporter& importer, const onnx::NodeProto& node, std::string name,
                         int opset, int version, std::vector<Ref*> inputs, AttrMap attrs)
    : importer_(importer), node_(node), name_(std::move(name)), opset_(opset), version_(version),
      inputs_(std::move(inputs)), attrs_(std::move(attrs)) {}

int NodeContext::num_outputs() const {
  int n = node_.output_size();
  while (n > 0 && node_.output(n - 1).empty()) --n;
  return n;
}

bool NodeContext::output_used(int i) const {
  return i < node_.output_size() && !node_.output(i).empty() && importer_.is_used(node_.output(i));
}

absl::Status NodeContext::error(std::string_view message) const {
  return absl::InvalidArgumentError(str_cat(op_type(), " '", name_, "': ", message));
}

absl::Status NodeContext::unsupported(std::string_view message) const {
  return absl::UnimplementedError(str_cat(op_type(), " '", name_, "': ", message));
}

absl::Status NodeContext::check_inputs(int min, int max) const {
  int n = num_inputs();
  while (n > min && !inputs_[n - 1]) --n;
  if (n < min || n > max)
    return error(str_cat(n, " inputs given, expected ", min, min == max ? "" : str_cat("..", max),
                         " at opset ", opset_));
  // An input named "" is absent: the required ones must be there (conversions read them).
  for (int i = 0; i < min; ++i)
    if (!inputs_[i]) return error(str_cat("required input ", i, " is missing (its name is empty)"));
  return absl::OkStatus();
}

absl::StatusOr<Tensor> NodeContext::constant_input(int i, std::string_view role) const {
  const Ref* r = input(i);
  if (!r) return error(str_cat("input ", i, " (", role, ") is missing"));
  if (!r->is_constant())
    return error(str_cat("input ", i, " (", role, ", tensor '", r->name,
                         "') must be a compile-time constant, but it is computed at run time"));
  return r->constant;
}

Ref* NodeContext::runtime_input(int i) const {
  Ref* r = input(i);
  return r && !r->is_constant() ? r : nullptr;
}

absl::Status NodeContext::input_to_ints(int i, std::string_view role, const std::string& attr) {
  if (!input(i)) return absl::OkStatus();
  auto t = constant_input(i, role);
  if (!t.ok()) return t.status();
  if (!is_integer(t->dtype()))
    return error(str_cat("input ", i, " (", role, ") must hold integers, not ",
                         dtype_name(t->dtype())));
  if (attrs_.count(attr))
    return error(str_cat("'", attr, "' is given both as attribute and as input ", i));
  attrs_[attr] = t->to_int64_vector();
  return absl::OkStatus();
}

absl::Status NodeContext::input_to_float(int i, std::string_view role, const std::string& attr) {
  if (!input(i)) return absl::OkStatus();
  auto t = constant_input(i, role);
  if (!t.ok()) return t.status();
  if (t->numel() != 1)
    return error(str_cat("input ", i, " (", role, ") must hold one value, it has shape ",
                         shape_to_string(t->shape())));
  attrs_[attr] = static_cast<float>(t->get_as_double(0));
  return absl::OkStatus();
}

std::optional<AttrValue> NodeContext::take_attr(const std::string& attr) {
  auto it = attrs_.find(attr);
  if (it == attrs_.end()) return std::nullopt;
  AttrValue v = std::move(it->second);
  attrs_.erase(it);
  return v;
}

absl::Status NodeContext::refuse_outputs_from(int first, std::string_view what) const {
  for (int i = first; i < node_.output_size(); ++i) {
    if (output_used(i))
      return unsupported(str_cat("output ", i, " ('", node_.output(i), "', ", what,
                                 ") is used by the model; collage supports only the inference "
                                 "output"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Ref>> NodeContext::emit(std::string_view op, std::vector<Ref*> inputs,
                                                   int num_outputs) {
  std::vector<std::string> outs(node_.output().begin(), node_.output().end());
  std::string node_name =
      importer_.pick_node_name(name_, outs, std::max(num_outputs, node_.output_size()));
  return importer_.emit(op, inputs, attrs_, node_name, outs, num_outputs);
}

absl::StatusOr<std::vector<Ref>> NodeContext::emit_helper(std::string_view op,
                                                          std::vector<Ref*> inputs,
                                                          const AttrMap& attrs,
                                                          std::string_view suffix) {
  std::string node_name = importer_.pick_node_name(str_cat(name_, "/", suffix), {}, 1);
  return importer_.emit(op, inputs, attrs, node_name, {node_name}, 1);
}

}  // namespace collage::onnx_import
