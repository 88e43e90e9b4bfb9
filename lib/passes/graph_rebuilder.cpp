// GraphRebuilder: value mapping and node copying shared by the passes.
#include "passes/graph_rebuilder.h"

#include <cassert>

#include "core/str_cat.h"

namespace collage::passes {

GraphRebuilder::GraphRebuilder(const Context& ctx, const Graph& source)
    : src_(source), b_(ctx, source.name()), map_(source.values().size(), kNoValue) {
  for (ValueId in : source.inputs()) {
    const Value& v = source.value(in);
    map_[in] = b_.add_input(v.name, v.type);
  }
}

ValueId GraphRebuilder::map(ValueId old) {
  if (old == kNoValue) return kNoValue;
  if (map_[old] == kNoValue) {
    const Value& v = src_.value(old);
    assert(v.kind == ValueKind::constant && "source value used before it was mapped");
    map_[old] = b_.add_constant(v.name, src_.constants()[v.constant]);
  }
  return map_[old];
}

std::vector<ValueId> GraphRebuilder::map_all(const std::vector<ValueId>& old) {
  std::vector<ValueId> out;
  out.reserve(old.size());
  for (ValueId v : old) out.push_back(map(v));
  return out;
}

absl::Status GraphRebuilder::copy_node(NodeId n) {
  const Node& node = src_.node(n);
  return add_node_for(n, node.name, node.op_name(), map_all(node.inputs), node.attrs).status();
}

absl::StatusOr<std::vector<ValueId>> GraphRebuilder::add_node_for(
    NodeId replaced, std::string node_name, std::string_view op, std::vector<ValueId> inputs,
    std::shared_ptr<const OpAttrs> attrs) {
  const Node& old = src_.node(replaced);
  auto outs = b_.add_node(op, std::move(inputs), std::move(attrs), std::move(node_name),
                          static_cast<int>(old.outputs.size()));
  if (!outs.ok()) return outs.status();
  if (outs->size() != old.outputs.size())
    return absl::InternalError(str_cat(op, " '", old.name, "': replacement has ", outs->size(),
                                       " outputs, the node it replaces ", old.outputs.size()));
  for (size_t i = 0; i < outs->size(); ++i) {
    b_.set_value_name((*outs)[i], src_.value(old.outputs[i]).name);
    map_[old.outputs[i]] = (*outs)[i];
  }
  ++num_nodes_;
  return outs;
}

absl::StatusOr<Graph> GraphRebuilder::finish() {
  for (ValueId out : src_.outputs()) b_.add_output(map(out));
  return b_.finish();
}

}  // namespace collage::passes
