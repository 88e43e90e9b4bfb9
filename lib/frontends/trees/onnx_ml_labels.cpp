// The dispatch of the ai.onnx.ml model converters, ZipMap, and what the classifiers share: their
// labels and their input read as float32.
#include "collage/ops.h"
#include "frontends/trees/onnx_ml_models.h"

namespace collage {
namespace {

using Converter = absl::Status (*)(const NodeAttrs&, GraphBuilder&, trees::Emitter&, ValueId,
                                   std::vector<ValueId>&);

struct Entry {
  std::string_view op_type;
  Converter convert;  // null: ZipMap
};

constexpr Entry kModels[] = {
    {"LinearClassifier", ml::convert_linear_classifier},
    {"LinearRegressor", ml::convert_linear_regressor},
    {"SVMClassifier", ml::convert_svm_classifier},
    {"SVMRegressor", ml::convert_svm_regressor},
    {"Normalizer", ml::convert_normalizer},
    {"ZipMap", nullptr},
};

const Entry* find_model(std::string_view op_type) {
  for (const Entry& e : kModels)
    if (e.op_type == op_type) return &e;
  return nullptr;
}

// ZipMap: refused, or its input (the probabilities) in place of its sequence of maps, through
// an Identity so that the value takes ZipMap's output name.
absl::Status convert_zipmap(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e, ValueId x,
                            std::vector<ValueId>& outputs, ZipMapMode mode) {
  if (mode == ZipMapMode::refuse)
    return a.unsupported(
        "makes a sequence of maps, which collage's tensors cannot hold; compile with "
        "--zipmap probabilities (OnnxImportOptions::zipmap) to take its input, the "
        "probability tensor, as the output instead, or export with skl2onnx's zipmap=False");
  const size_t classes = a.has("classlabels_strings") ? a.strings("classlabels_strings").size()
                                                      : a.ints("classlabels_int64s").size();
  const TensorType& t = b.value(x).type;
  if (t.dtype != DType::f32 || t.shape.size() != 2 ||
      (t.shape[1] >= 0 && static_cast<size_t>(t.shape[1]) != classes))
    return a.error(str_cat("input is ", type_to_string(t), ", expected f32[Nx", classes,
                           "] (one column per label)"));
  outputs = {e.op("Identity", {x})};
  return absl::OkStatus();
}

}  // namespace

bool is_onnx_ml_model_op(std::string_view op_type) { return find_model(op_type) != nullptr; }

absl::Status convert_onnx_ml_model(const onnx::NodeProto& node, GraphBuilder& b, ValueId x,
                                   std::vector<ValueId>& outputs, ZipMapMode zipmap) {
  const Entry* entry = find_model(node.op_type());
  const NodeAttrs a(node);
  if (!entry) return a.error("is not an ai.onnx.ml model collage converts");
  outputs.clear();
  std::string prefix = NodeAttrs::shown(node);
  if (prefix.empty()) prefix = node.op_type();
  trees::Emitter e(b, prefix);
  const absl::Status s = entry->convert ? entry->convert(a, b, e, x, outputs)
                                        : convert_zipmap(a, b, e, x, outputs, zipmap);
  if (!s.ok()) return s;
  return e.status();
}

namespace ml {

ClassLabels read_class_labels(const NodeAttrs& a, const std::string& ints_attr) {
  ClassLabels labels;
  labels.strings = a.strings("classlabels_strings");
  labels.use_strings = !labels.strings.empty();
  if (!labels.use_strings) labels.ints = a.ints(ints_attr);
  return labels;
}

ValueId label_of(trees::Emitter& e, const ClassLabels& labels, ValueId position) {
  const auto count = static_cast<int64_t>(labels.size());
  if (!labels.use_strings)
    return e.op("Gather", {e.i64("labels", {count}, labels.ints), position});
  std::vector<int64_t> positions(labels.size());
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int64_t>(i);
  const std::vector<std::string> none(1);
  return e.op("LabelEncoder", {position}, make_attrs<LabelEncoderAttrs>([&](auto& le) {
                le.keys = Tensor::from_i64({count}, positions);
                le.values = Tensor::from_strings({count}, labels.strings);
                le.default_value = Tensor::from_strings({1}, none);
              }));
}

absl::StatusOr<ValueId> features_as_f32(trees::Emitter& e, const NodeAttrs& a, GraphBuilder& b,
                                        ValueId x, int64_t* batch, int64_t* features) {
  const TensorType t = b.value(x).type;
  if (t.dtype != DType::f32 && t.dtype != DType::f64 && t.dtype != DType::i32 &&
      t.dtype != DType::i64)
    return a.error(str_cat("input is ", type_to_string(t), "; it takes f32, f64, i32 or i64"));
  if (t.shape.empty() || t.shape.size() > 2 || t.is_dynamic())
    return a.error(str_cat("input is ", type_to_string(t),
                           ", expected [batch, features] or [features] with known sizes"));
  *batch = t.shape.size() == 1 ? 1 : t.shape[0];
  *features = t.shape.back();
  ValueId y = x;
  if (t.dtype != DType::f32)
    y = e.op("Cast", {y}, make_attrs<CastAttrs>([](auto& c) { c.to = "f32"; }));
  if (t.shape.size() == 1)
    y = e.op("Reshape", {y}, make_attrs<ReshapeAttrs>([&](auto& r) {
               r.shape = {1, *features};
             }));
  return y;
}

}  // namespace ml
}  // namespace collage
