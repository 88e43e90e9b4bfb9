// ONNX AttributeProto -> AttrValue.
#include "frontends/onnx/onnx_attrs.h"

#include "core/str_cat.h"

namespace collage::onnx_import {

absl::StatusOr<AttrMap> convert_attributes(const onnx::NodeProto& node, const TensorSource& source,
                                           std::string_view who) {
  using onnx::AttributeProto;
  AttrMap out;
  for (const AttributeProto& a : node.attribute()) {
    auto fail = [&](std::string_view what) {
      return absl::UnimplementedError(
          str_cat(who, ": attribute '", a.name(), "' ", what, "; not supported"));
    };
    if (!a.ref_attr_name().empty()) return fail("refers to a function attribute");
    AttrValue v;
    switch (a.type()) {
      case AttributeProto::FLOAT: v = a.f(); break;
      case AttributeProto::INT: v = a.i(); break;
      case AttributeProto::STRING: v = a.s(); break;
      case AttributeProto::FLOATS: v = std::vector<float>(a.floats().begin(), a.floats().end()); break;
      case AttributeProto::INTS: v = std::vector<int64_t>(a.ints().begin(), a.ints().end()); break;
      case AttributeProto::STRINGS: {
        // Names (e.g. the activations of LSTM), joined with commas.
        std::string joined;
        for (const std::string& e : a.strings()) joined += (joined.empty() ? "" : ",") + e;
        v = std::move(joined);
        break;
      }
      case AttributeProto::TENSOR: {
        auto t = tensor_from_proto(a.t(), source);
        if (!t.ok())
          return absl::Status(t.status().code(),
                              str_cat(who, ": attribute '", a.name(), "': ", t.status().message()));
        v = std::move(*t);
        break;
      }
      case AttributeProto::UNDEFINED:
        return absl::InvalidArgumentError(
            str_cat(who, ": attribute '", a.name(), "' has no type"));
      default:
        return fail(str_cat("is of kind ", AttributeProto::AttributeType_Name(a.type())));
    }
    if (!out.emplace(a.name(), std::move(v)).second)
      return absl::InvalidArgumentError(
          str_cat(who, ": attribute '", a.name(), "' is given twice"));
  }
  return out;
}

}  // namespace collage::onnx_import
