// Structural verification of a graph: ids, order, types and names.
#include <set>

#include "core/str_cat.h"
#include "collage/graph.h"

namespace collage {

absl::Status verify_graph(const Context& ctx, const Graph& g) {
  const auto nvalues = static_cast<ValueId>(g.values().size());
  std::vector<bool> defined(g.values().size(), false);
  std::set<std::string> value_names, node_names;
  for (ValueId v = 0; v < nvalues; ++v) {
    const Value& val = g.value(v);
    if (!value_names.insert(val.name).second)
      return absl::InternalError(str_cat("value name '", val.name, "' is used twice"));
    if (val.kind == ValueKind::input) defined[v] = true;
    if (val.kind == ValueKind::constant) {
      if (val.constant < 0 || val.constant >= static_cast<int32_t>(g.constants().size()))
        return absl::InternalError(str_cat("constant value '", val.name, "' has no data"));
      if (g.constants()[val.constant].type() != val.type)
        return absl::InternalError(str_cat("constant '", val.name, "' type mismatch"));
      defined[v] = true;
    }
  }
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
    const Node& node = g.node(n);
    if (!node.op || !node.attrs)
      return absl::InternalError(str_cat("node '", node.name, "' has no operator"));
    if (ctx.ops().find(node.op->name) != node.op)
      return absl::InternalError(str_cat("node '", node.name, "': operator '", node.op->name,
                                              "' is not from this context"));
    if (!node_names.insert(node.name).second)
      return absl::InternalError(str_cat("node name '", node.name, "' is used twice"));
    std::vector<const TensorType*> types;
    std::vector<const Tensor*> consts;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        types.push_back(nullptr);
        consts.push_back(nullptr);
        continue;
      }
      if (in < 0 || in >= nvalues || !defined[in])
        return absl::InternalError(
            str_cat("node '", node.name, "' reads a value that is not defined before it"));
      types.push_back(&g.value(in).type);
      consts.push_back(g.constant_of(in));
    }
    auto inferred = infer_output_types(*node.op, node.name, *node.attrs, std::move(types),
                                       std::move(consts), static_cast<int>(node.outputs.size()));
    if (!inferred.ok()) return inferred.status();
    if (inferred->size() != node.outputs.size())
      return absl::InternalError(str_cat("node '", node.name, "': output count mismatch"));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      ValueId out = node.outputs[i];
      if (out < 0 || out >= nvalues || defined[out])
        return absl::InternalError(str_cat("node '", node.name, "': bad output id"));
      const Value& v = g.value(out);
      if (v.producer != n || v.output_index != static_cast<int>(i))
        return absl::InternalError(str_cat("node '", node.name, "': output link broken"));
      if (v.type != (*inferred)[i])
        return absl::InternalError(str_cat("node '", node.name, "': output ", i, " has type ",
                                                type_to_string(v.type), ", inference says ",
                                                type_to_string((*inferred)[i])));
      defined[out] = true;
    }
  }
  std::vector<bool> boundary(g.values().size(), false);
  for (ValueId out : g.outputs()) {
    if (out < 0 || out >= nvalues || !defined[out])
      return absl::InternalError("a graph output refers to an undefined value");
    boundary[out] = true;
  }
  for (ValueId in : g.inputs()) boundary[in] = true;
  for (ValueId v = 0; v < nvalues; ++v) {
    const Value& val = g.value(v);
    if (val.layout.plain()) continue;
    if (!boundary[v])
      return absl::InvalidArgumentError(str_cat("value '", val.name, "' has layout ",
                                                layout_name(val.layout, val.type.shape.size()),
                                                " but is neither an input nor an output"));
    if (absl::Status s = check_layout(val.layout, val.type); !s.ok())
      return absl::InvalidArgumentError(str_cat("value '", val.name, "': ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace collage
