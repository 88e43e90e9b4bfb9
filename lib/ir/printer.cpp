// Text form of a graph.
#include <sstream>

#include "collage/graph.h"

namespace collage {

namespace {

// "f32[1x64x56x56]", with " nChw16c" when the value's layout is not plain.
std::string typed(const Value& v) {
  std::string t = type_to_string(v.type);
  if (!v.layout.plain()) t += " " + layout_name(v.layout, v.type.shape.size());
  return t;
}

}  // namespace

std::string print_graph(const Graph& g) {
  std::ostringstream s;
  auto ref = [&](ValueId v) { return v == kNoValue ? std::string("_") : "%" + g.value(v).name; };
  s << "graph " << g.name() << "(";
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    s << (i ? ", " : "") << "%" << v.name << ": " << typed(v);
  }
  s << ") {\n";
  for (const Value& v : g.values()) {
    if (v.kind == ValueKind::constant)
      s << "  const %" << v.name << " : " << type_to_string(v.type) << "\n";
  }
  for (const Node& n : g.nodes()) {
    s << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Value& v = g.value(n.outputs[i]);
      s << (i ? ", " : "") << "%" << v.name << ": " << typed(v);
    }
    s << " = " << n.op->name << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) s << (i ? ", " : "") << ref(n.inputs[i]);
    s << ")";
    std::string attrs = n.attrs->to_string();
    if (!attrs.empty()) s << " {" << attrs << "}";
    s << "  # " << n.name << "\n";
  }
  s << "  return ";
  for (size_t i = 0; i < g.outputs().size(); ++i) s << (i ? ", " : "") << ref(g.outputs()[i]);
  s << "\n}\n";
  return s.str();
}

}  // namespace collage
