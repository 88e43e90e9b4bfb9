// ONNX conversions of the ai.onnx.ml operators that are compositions of default-domain ones
// (Binarizer, ArrayFeatureExtractor); the tree ensembles and Scaler go to the tree frontend.
#include <cmath>
#include <string_view>

#include "core/str_cat.h"
#include "frontends/onnx/onnx_node.h"

namespace collage::onnx_import {
namespace {

using Result = absl::StatusOr<std::vector<Ref>>;

Ref constant_ref(Tensor t, std::string name) {
  TensorType type = t.type();
  return Ref{kNoValue, std::move(t), std::move(type), std::move(name)};
}

// Binarizer: Y = X > threshold ? 1 : 0 in X's type, as Cast(Greater(X, threshold)). For integer
// X the threshold is floored, which keeps X > threshold exact.
Result binarizer(NodeContext& n) {
  if (absl::Status s = n.check_inputs(1, 1); !s.ok()) return s;
  Ref* x = n.input(0);
  if (!x) return n.error("input 0 (X) is missing");
  float threshold = 0.f;
  if (auto t = n.take_attr("threshold")) {
    const auto* v = std::get_if<float>(&*t);
    if (!v) return n.error("'threshold' must be a float");
    threshold = *v;
  }
  if (!n.attrs().empty())
    return n.error(str_cat("unknown attribute '", n.attrs().begin()->first, "'"));
  const DType t = x->type.dtype;
  if (t != DType::f32 && t != DType::f64 && t != DType::i32 && t != DType::i64)
    return n.error(str_cat("X has element type ", dtype_name(t),
                           "; Binarizer takes f32, f64, i32 and i64"));
  if (is_integer(t)) threshold = std::floor(threshold);
  Ref limit = constant_ref(Tensor::scalar_f32(threshold).cast(t), n.name() + "/threshold");
  auto above = n.emit_helper("Greater", {x, &limit}, {}, "above");
  if (!above.ok()) return above.status();
  n.attrs()["to"] = std::string(dtype_name(t));
  return n.emit("Cast", {&above->front()});
}

// ArrayFeatureExtractor(X, indices): X's last axis gathered at the flattened indices; a 1-D X
// gives one row ([1, k]), as ONNX Runtime has it.
Result array_feature_extractor(NodeContext& n) {
  if (absl::Status s = n.check_inputs(2, 2); !s.ok()) return s;
  Ref* x = n.input(0);
  Ref* indices = n.input(1);
  if (!x || !indices) return n.error("needs inputs X and Y (the indices)");
  if (x->type.shape.empty()) return n.error("X is a scalar; it needs an axis to select from");
  const int64_t k = indices->type.numel();
  if (k < 0) return n.error("the number of indices must be known at compile time");
  Ref* flat = indices;
  std::vector<Ref> flattened;
  if (indices->type.shape != Shape{k}) {
    AttrMap to_1d{{"shape", std::vector<int64_t>{k}}, {"allowzero", int64_t{1}}};
    auto r = n.emit_helper("Reshape", {indices}, to_1d, "indices");
    if (!r.ok()) return r.status();
    flattened = *std::move(r);
    flat = &flattened.front();
  }
  if (x->type.shape.size() > 1) {
    n.attrs() = AttrMap{{"axis", int64_t{-1}}};
    return n.emit("Gather", {x, flat});
  }
  auto gathered = n.emit_helper("Gather", {x, flat}, {{"axis", int64_t{-1}}}, "gather");
  if (!gathered.ok()) return gathered.status();
  n.attrs() = AttrMap{{"shape", std::vector<int64_t>{1, k}}, {"allowzero", int64_t{1}}};
  return n.emit("Reshape", {&gathered->front()});
}

struct Entry {
  std::string_view op_type;
  OpConversion conversion;
};

constexpr Entry kConversions[] = {
    {"Binarizer", {binarizer, 1, false}},
    {"ArrayFeatureExtractor", {array_feature_extractor, 1, false}},
};

}  // namespace

const OpConversion* find_ml_conversion(std::string_view op_type) {
  for (const Entry& e : kConversions)
    if (e.op_type == op_type) return &e.conversion;
  return find_ml_text_conversion(op_type);
}

}  // namespace collage::onnx_import
