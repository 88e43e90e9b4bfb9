// The strings backend: which nodes it takes, and their attributes turned into the strings
// module's parameters and constants (runtime/modules/strings/str_params.h).
#include <algorithm>

#include "backends/common/module_kernel.h"
#include "collage/backends/strings.h"
#include "collage/ops/text.h"
#include "core/str_cat.h"
#include "str_module.h"
#include "str_params.h"

namespace collage {
namespace {

using rt_strings::StrOp;
using rt_strings::StrParams;

// A node the module runs: a string operator, or a LabelEncoder whose types it has.
bool takes(const Graph& g, const Node& n) {
  const StrOp op = rt_strings::str_op_of(n.op_name());
  if (op == StrOp::count_) return false;
  auto fits = [](DType t) { return t != DType::f16 && t != DType::bf16; };
  if (op == StrOp::cast_string)
    return fits(g.value(n.inputs[0]).type.dtype) && fits(g.value(n.outputs[0]).type.dtype);
  if (op != StrOp::label_encoder) return true;
  const auto& a = n.get<LabelEncoderAttrs>();
  return fits(g.value(n.inputs[0]).type.dtype) && fits(a.values.dtype());
}

// The attributes of `n` as the module's integers and strings, and the constants that follow the
// operands' (keys, values and default; stopwords).
absl::Status encode_attributes(const Node& n, StrParams* p, std::vector<Tensor>* constants) {
  switch (p->op) {
    case StrOp::label_encoder: {
      const auto& a = n.get<LabelEncoderAttrs>();
      constants->insert(constants->end(), {a.keys, a.values, a.default_value});
      return absl::OkStatus();
    }
    case StrOp::string_normalizer: {
      const auto& a = n.get<StringNormalizerAttrs>();
      const int64_t action = a.case_change_action == "LOWER"   ? 1
                             : a.case_change_action == "UPPER" ? 2
                                                               : 0;
      p->ints = {action, a.is_case_sensitive};
      constants->push_back(a.stopwords.empty() ? Tensor(DType::str, {0}) : a.stopwords);
      return absl::OkStatus();
    }
    case StrOp::string_split: {
      const auto& a = n.get<StringSplitAttrs>();
      p->ints = {a.maxsplit};
      p->strings = {a.delimiter};
      return absl::OkStatus();
    }
    case StrOp::regex_full_match:
      p->strings = {n.get<RegexFullMatchAttrs>().pattern};
      return absl::OkStatus();
    case StrOp::string_concat:
    case StrOp::string_equal:
    case StrOp::cast_string:
      return absl::OkStatus();
    case StrOp::count_:
      break;
  }
  return absl::InvalidArgumentError(str_cat("strings: no kernel for ", n.op_name()));
}

class StringsBackend : public Backend {
 public:
  StringsBackend()
      : Backend(std::string(kStringsBackend), DeviceKind::cpu, rt_strings::kModuleVersion) {
    add_pattern_rule("strings.node", [](const Graph& g, const GraphReachability&,
                                        const RuleOptions&) {
      std::vector<NodeSet> out;
      for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
        if (takes(g, g.node(n))) out.push_back(NodeSet::of(g.nodes().size(), {n}));
      return out;
    });
  }

  // StringSplit's and StringNormalizer's output sizes depend on the strings.
  bool supports_dynamic_shapes() const override { return true; }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    if (group.nodes().size() != 1)
      return absl::InvalidArgumentError(
          str_cat("strings: group '", group.name(), "' must be one node"));
    const Node& node = group.nodes()[0];
    if (!takes(group, node))
      return absl::InvalidArgumentError(
          str_cat("strings: no kernel for ", node.op_name(), " '", node.name, "'"));
    StrParams p;
    p.op = rt_strings::str_op_of(node.op_name());
    KernelRecord record;
    // Operands the compiler knows are the first constants; the attributes' follow.
    for (ValueId v : node.inputs) {
      if (const Tensor* c = group.constant_of(v)) {
        p.sources.push_back(-2 - static_cast<int64_t>(record.constants.size()));
        record.constants.push_back(*c);
      } else {
        const auto& ins = group.inputs();
        p.sources.push_back(std::find(ins.begin(), ins.end(), v) - ins.begin());
      }
    }
    if (absl::Status s = encode_attributes(node, &p, &record.constants); !s.ok()) return s;
    record.module = rt_strings::kModuleName;
    record.entry = std::string(rt_strings::str_op_name(p.op));
    record.params = rt_strings::encode_params(p);
    return make_module_kernel(rt_strings::module_table(), std::move(record), group);
  }
};

}  // namespace

std::unique_ptr<Backend> make_strings_backend() { return std::make_unique<StringsBackend>(); }

absl::Status register_strings_backend(BackendRegistry& registry) {
  return registry.add(make_strings_backend());
}

}  // namespace collage
