// ONNX conversions of the string operators (StringConcat, StringSplit, StringNormalizer,
// RegexFullMatch, Equal on strings, ai.onnx.ml LabelEncoder) and of TopK.
#include <string_view>

#include "core/str_cat.h"
#include "frontends/onnx/onnx_node.h"

namespace collage::onnx_import {
namespace {

using Result = absl::StatusOr<std::vector<Ref>>;

Result generic(NodeContext& n) {
  return n.emit(n.op_type(), n.inputs(), n.num_outputs() > 0 ? n.num_outputs() : -1);
}

// The STRINGS attribute `name` as a 1-D str tensor (AttrMap joins such lists with commas,
// which strings may contain), removed from the attributes; nullopt when absent.
std::optional<Tensor> take_strings(NodeContext& n, const std::string& name) {
  if (!n.take_attr(name)) return std::nullopt;
  for (const onnx::AttributeProto& a : n.proto().attribute()) {
    if (a.name() != name) continue;
    std::vector<std::string> list(a.strings().begin(), a.strings().end());
    return Tensor::from_strings({static_cast<int64_t>(list.size())}, list);
  }
  return std::nullopt;
}

// Equal: StringEqual on strings, the numeric Equal otherwise.
Result equal(NodeContext& n) {
  if (absl::Status s = n.check_inputs(2, 2); !s.ok()) return s;
  if (n.input(0) && n.input(0)->type.dtype == DType::str)
    return n.emit("StringEqual", n.inputs());
  return generic(n);
}

// StringSplit: maxsplit absent means no limit.
Result string_split(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
  return generic(n);
}

// StringNormalizer: stopwords is a list of strings; `locale` only chooses the case mapping of
// a language, and collage maps case the same way for every locale (docs/onnx.md).
Result string_normalizer(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
  n.take_attr("locale");
  if (auto stop = take_strings(n, "stopwords")) n.attrs()["stopwords"] = *std::move(stop);
  return generic(n);
}

// TopK: k is an attribute in version 1 and input K from version 10; a K computed at run time
// stays an input (the output's axis is then a run-time dimension).
Result top_k(NodeContext& n) {
  if (n.version() < 10) {
    if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
    auto k = n.take_attr("k");
    if (!k || !std::holds_alternative<int64_t>(*k)) return n.error("needs an integer 'k'");
    n.attrs()["k"] = std::vector<int64_t>{std::get<int64_t>(*k)};
    return n.emit("TopK", {n.input(0)}, n.num_outputs());
  }
  if (absl::Status s = n.check_inputs(2, 2); !s.ok()) return s;
  if (Ref* k = n.runtime_input(1)) return n.emit("TopK", {n.input(0), k}, n.num_outputs());
  if (absl::Status s = n.input_to_ints(1, "K", "k"); !s.ok()) return s;
  return n.emit("TopK", {n.input(0)}, n.num_outputs());
}

// --- LabelEncoder ---

// The keys, values or default given as attribute `<prefix>_strings`, `_int64s`, `_floats`
// (`default_string`, ... for the default) or `<prefix>_tensor`; null when none is.
absl::StatusOr<Tensor> label_list(NodeContext& n, const std::string& prefix) {
  Tensor found;
  int given = 0;
  if (auto s = take_strings(n, prefix + "_strings")) found = *std::move(s), ++given;
  if (auto v = n.take_attr(prefix + "_int64s")) {
    const auto* ints = std::get_if<std::vector<int64_t>>(&*v);
    if (!ints) return n.error(str_cat("'", prefix, "_int64s' must be a list of integers"));
    found = Tensor::from_i64({static_cast<int64_t>(ints->size())}, *ints), ++given;
  }
  if (auto v = n.take_attr(prefix + "_floats")) {
    const auto* floats = std::get_if<std::vector<float>>(&*v);
    if (!floats) return n.error(str_cat("'", prefix, "_floats' must be a list of floats"));
    found = Tensor::from_f32({static_cast<int64_t>(floats->size())}, *floats), ++given;
  }
  if (auto v = n.take_attr(prefix + "_tensor")) {
    const auto* t = std::get_if<Tensor>(&*v);
    if (!t) return n.error(str_cat("'", prefix, "_tensor' must be a tensor"));
    found = t->reshaped({t->numel()}), ++given;
  }
  if (given > 1) return n.error(str_cat("more than one of ", prefix, "_* is given"));
  return found;
}

// The default for values of type `t`: an attribute of that type, else ONNX's default
// ("_Unused", -1 or -0.0).
absl::StatusOr<Tensor> label_default(NodeContext& n, DType t) {
  Tensor given;
  if (auto v = n.take_attr("default_tensor")) {
    const auto* d = std::get_if<Tensor>(&*v);
    if (!d) return n.error("'default_tensor' must be a tensor");
    given = d->reshaped({d->numel()});
  }
  auto take = [&](const char* name) { return n.take_attr(name); };
  auto s = take("default_string");
  auto i = take("default_int64");
  auto f = take("default_float");
  if (!given.empty()) return given;
  if (t == DType::str) {
    const std::string v = s && std::holds_alternative<std::string>(*s)
                              ? std::get<std::string>(*s)
                              : std::string("_Unused");
    return Tensor::from_strings({1}, std::span<const std::string>(&v, 1));
  }
  if (is_float(t)) {
    const float v = f && std::holds_alternative<float>(*f) ? std::get<float>(*f) : -0.0f;
    return Tensor::from_f32({1}, std::span<const float>(&v, 1)).cast(t);
  }
  const int64_t v = i && std::holds_alternative<int64_t>(*i) ? std::get<int64_t>(*i) : -1;
  return Tensor::from_i64({1}, std::span<const int64_t>(&v, 1)).cast(t);
}

Result label_encoder(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
  if (n.attrs().count("classes_strings"))
    return n.unsupported("classes_strings (LabelEncoder version 1) is not supported; "
                         "version 2 and later give keys_* and values_*");
  auto keys = label_list(n, "keys");
  if (!keys.ok()) return keys.status();
  auto values = label_list(n, "values");
  if (!values.ok()) return values.status();
  if (keys->empty() || values->empty()) return n.error("needs keys_* and values_*");
  auto fallback = label_default(n, values->dtype());
  if (!fallback.ok()) return fallback.status();
  if (!n.attrs().empty())
    return n.error(str_cat("unknown attribute '", n.attrs().begin()->first, "'"));
  n.attrs()["keys"] = *std::move(keys);
  n.attrs()["values"] = *std::move(values);
  n.attrs()["default_value"] = *std::move(fallback);
  return n.emit("LabelEncoder", {n.input(0)});
}

struct Entry {
  std::string_view op_type;
  OpConversion conversion;
};

constexpr Entry kConversions[] = {
    {"Equal", {equal, 7, true}},
    {"StringConcat", {generic, 20, true}},
    {"StringSplit", {string_split, 20, true}},
    {"StringNormalizer", {string_normalizer, 10, true}},
    {"RegexFullMatch", {generic, 20, true}},
    {"TopK", {top_k, 1, true}},
};

constexpr Entry kMlConversions[] = {
    {"LabelEncoder", {label_encoder, 1, false}},
};

}  // namespace

const OpConversion* find_text_conversion(std::string_view op_type) {
  for (const Entry& e : kConversions)
    if (e.op_type == op_type) return &e.conversion;
  return nullptr;
}

const OpConversion* find_ml_text_conversion(std::string_view op_type) {
  for (const Entry& e : kMlConversions)
    if (e.op_type == op_type) return &e.conversion;
  return nullptr;
}

}  // namespace collage::onnx_import
