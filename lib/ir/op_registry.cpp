// Operator registry, inference context helpers and the default context.
#include "core/str_cat.h"
#include "collage/context.h"
#include "collage/op.h"
#include "ir/attr_inputs.h"

namespace collage {

std::string_view fusion_kind_name(FusionKind k) {
  switch (k) {
    case FusionKind::elementwise: return "elementwise";
    case FusionKind::broadcast: return "broadcast";
    case FusionKind::injective: return "injective";
    case FusionKind::reduction: return "reduction";
    case FusionKind::out_elementwise_fusable: return "out-elementwise-fusable";
    case FusionKind::opaque: return "opaque";
  }
  return "?";
}

void InferContext::set_output(int i, TensorType t) {
  if (static_cast<int>(outputs_.size()) <= i) outputs_.resize(i + 1);
  outputs_[i] = std::move(t);
}

absl::Status InferContext::error(std::string_view message) const {
  return absl::InvalidArgumentError(str_cat(op_, " '", node_, "': ", message));
}

absl::Status OpRegistry::add(OpDef def) {
  if (ops_.count(def.name)) return absl::AlreadyExistsError("operator '" + def.name + "' exists");
  if (!def.attr_inputs.empty()) wrap_attr_inputs(def);
  std::string name = def.name;
  ops_.emplace(name, std::make_unique<OpDef>(std::move(def)));
  return absl::OkStatus();
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> v;
  for (const auto& [k, _] : ops_) v.push_back(k);
  return v;
}

Context::Context() { register_builtin_ops(ops_); }

}  // namespace collage
