// Attribute inputs: infer and reference wrapped to read attributes from run-time values
// (attr_inputs.h).
#include "ir/attr_inputs.h"

#include <algorithm>
#include <cassert>
#include <memory>

#include "core/str_cat.h"

namespace collage {
namespace {

// Checks the type of attribute input `a`, node input `index` (named by its attribute in errors).
absl::Status check_type(const AttrInput& a, int index, const TensorType& t) {
  auto bad = [&](std::string_view want) {
    return absl::InvalidArgumentError(str_cat("input ", index, " (", a.attr, ") must be ", want,
                                              ", got ", type_to_string(t)));
  };
  switch (a.kind) {
    case AttrInput::Kind::ints:
      if (!is_integer(t.dtype) || t.shape.size() > 1) return bad("an integer list");
      break;
    case AttrInput::Kind::floats:
      if (!is_float(t.dtype) || t.shape.size() > 1) return bad("a floating-point list");
      break;
    case AttrInput::Kind::scalar:
      if (t.shape.size() > 1 || (!t.is_dynamic() && t.numel() > 1)) return bad("one value");
      break;
  }
  return absl::OkStatus();
}

AttrValue value_of(const AttrInput& a, const Tensor& t) {
  switch (a.kind) {
    case AttrInput::Kind::ints: return t.to_int64_vector();
    case AttrInput::Kind::floats: {
      std::vector<float> v;
      for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<float>(t.get_as_double(i)));
      return v;
    }
    case AttrInput::Kind::scalar: break;
  }
  return static_cast<float>(t.numel() ? t.get_as_double(0) : 0.0);
}

// "axes [0, 2]" or "value 1.5": what a message shows of the values.
std::string shown(const AttrInput& a, const Tensor& t) {
  std::string s = str_cat(a.attr, " [");
  for (int64_t i = 0; i < t.numel() && i < 16; ++i)
    s += str_cat(i ? ", " : "", a.kind == AttrInput::Kind::ints ? str_cat(t.get_as_int64(i))
                                                                : str_cat(t.get_as_double(i)));
  return s + (t.numel() > 16 ? ", ...]" : "]");
}

// The attributes with the values of the attribute inputs set.
struct Applied {
  std::unique_ptr<OpAttrs> attrs;  // null when no attribute input is present
  std::string values;              // the values taken, for messages
};

// `attrs` with each present attribute input's value set; `value(i)` is input i's tensor.
template <typename ValueOf>
absl::StatusOr<Applied> apply(const OpDef& def, const OpAttrs& attrs, int inputs, ValueOf value) {
  Applied out;
  AttrMap map;
  for (size_t j = 0; j < def.attr_inputs.size(); ++j) {
    const int i = def.first_attr_input + static_cast<int>(j);
    const Tensor* t = i < inputs ? value(i) : nullptr;
    if (!t) continue;
    const AttrInput& a = def.attr_inputs[j];
    if (absl::Status s = check_type(a, i, t->type()); !s.ok()) return s;
    map[a.attr] = value_of(a, *t);
    out.values += str_cat(out.values.empty() ? "" : ", ", shown(a, *t));
  }
  if (map.empty()) return out;
  out.attrs = attrs.clone();
  if (absl::Status s = fill_attrs(*out.attrs, map); !s.ok()) return s;
  return out;
}

// The default of infer_unknown: input 0's dtype and rank, every dimension unknown; each requested
// output alike.
absl::Status infer_all_unknown(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is missing");
  TensorType t = ctx.input(0);
  for (int64_t& d : t.shape) d = kDynamicDim;
  const int n = ctx.requested_outputs() > 0 ? ctx.requested_outputs() : 1;
  for (int i = 0; i < n; ++i) ctx.set_output(i, t);
  return absl::OkStatus();
}

InferFn wrap_infer(const OpDef& def) {
  return [def](InferContext& ctx) -> absl::Status {
    auto in_node = [&](const absl::Status& s) {
      return absl::Status(s.code(), str_cat(ctx.op_name(), " '", ctx.node_name(), "': ",
                                            s.message()));
    };
    const int first = def.first_attr_input;
    bool present = false, known = true;
    for (int i = first; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i)) continue;
      present = true;
      known = known && ctx.constant(i);
      if (absl::Status s = check_type(def.attr_inputs[i - first], i, ctx.input(i)); !s.ok())
        return in_node(s);
    }
    if (present && !known) return (def.infer_unknown ? def.infer_unknown : infer_all_unknown)(ctx);
    auto applied = apply(def, ctx.all_attrs(), ctx.num_inputs(),
                       [&](int i) { return ctx.constant(i); });
    if (!applied.ok()) return in_node(applied.status());
    std::vector<const TensorType*> types;
    std::vector<const Tensor*> consts;
    for (int i = 0; i < std::min(first, ctx.num_inputs()); ++i) {
      types.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
      consts.push_back(ctx.constant(i));
    }
    const OpAttrs& attrs = applied->attrs ? *applied->attrs : ctx.all_attrs();
    InferContext inner(ctx.op_name(), ctx.node_name(), attrs, std::move(types), std::move(consts),
                       ctx.requested_outputs());
    if (absl::Status s = def.infer(inner); !s.ok()) {
      if (applied->values.empty()) return s;
      return absl::Status(s.code(), str_cat(s.message(), " (", applied->values, " from inputs)"));
    }
    for (size_t o = 0; o < inner.outputs().size(); ++o)
      ctx.set_output(static_cast<int>(o), inner.outputs()[o]);
    return absl::OkStatus();
  };
}

KernelFn wrap_reference(const OpDef& def) {
  return [def](const KernelArgs& k) -> absl::Status {
    const auto n = static_cast<int>(k.inputs.size());
    if (n <= def.first_attr_input) return def.reference(k);
    auto applied = apply(def, k.attrs, n, [&](int i) {
      return k.inputs[i].empty() ? nullptr : &k.inputs[i];
    });
    if (!applied.ok()) return applied.status();
    KernelArgs inner{k.inputs.first(def.first_attr_input), k.outputs,
                     applied->attrs ? *applied->attrs : k.attrs};
    return def.reference(inner);
  };
}

}  // namespace

void wrap_attr_inputs(OpDef& def) {
  assert(def.max_inputs >= 0 && "an operator with attribute inputs has a fixed arity");
  def.first_attr_input = def.max_inputs;
  def.max_inputs += static_cast<int>(def.attr_inputs.size());
  // The wrappers hold a copy of the def as it was, its own infer and reference.
  OpDef inner = def;
  def.infer = wrap_infer(inner);
  def.reference = wrap_reference(inner);
}

bool reads_attr_inputs(const Node& n) {
  if (n.op->attr_inputs.empty()) return false;
  for (size_t i = n.op->first_attr_input; i < n.inputs.size(); ++i)
    if (n.inputs[i] != kNoValue) return true;
  return false;
}

}  // namespace collage
