// The ai.onnx.ml models that are not tree ensembles (LinearClassifier, LinearRegressor,
// SVMClassifier, SVMRegressor) and the Normalizer and ZipMap of scikit-learn pipelines, converted
// into graph nodes that compute their outputs as ONNX Runtime does (onnx_ml_linear.cpp,
// onnx_ml_svm.cpp, onnx_ml_normalizer.cpp); and the pieces they share (onnx_ml_labels.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "collage/graph.h"
#include "collage/onnx.h"
#include "frontends/trees/onnx_ml_attrs.h"
#include "frontends/trees/tree_program.h"

namespace collage {

// True for the operators convert_onnx_ml_model takes.
bool is_onnx_ml_model_op(std::string_view op_type);

// Converts one such node applied to `x`: `outputs` gets its outputs in ONNX order. ZipMap
// follows `zipmap`. InvalidArgument naming the node for a malformed node, Unimplemented for what
// collage does not compute (each message says what).
absl::Status convert_onnx_ml_model(const onnx::NodeProto& node, GraphBuilder& b, ValueId x,
                                   std::vector<ValueId>& outputs, ZipMapMode zipmap);

namespace ml {

// A classifier's labels: classlabels_strings when given, else the integers of `ints_attr`.
struct ClassLabels {
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  bool use_strings = false;
  size_t size() const { return use_strings ? strings.size() : ints.size(); }
};
ClassLabels read_class_labels(const NodeAttrs& a, const std::string& ints_attr);

// The label output: the label at each row's class position `position` (i64 [batch]); string
// labels through a LabelEncoder (the strings backend runs it).
ValueId label_of(trees::Emitter& e, const ClassLabels& labels, ValueId position);

// `x` (f32, f64, i32 or i64, [batch, features] or [features]) as f32 [batch, features], as ONNX
// Runtime reads the input of these models; `features` gets the width. Errors name the node.
absl::StatusOr<ValueId> features_as_f32(trees::Emitter& e, const NodeAttrs& a, GraphBuilder& b,
                                        ValueId x, int64_t* batch, int64_t* features);

// Converters by operator (onnx_ml_linear.cpp, onnx_ml_svm.cpp, onnx_ml_normalizer.cpp).
absl::Status convert_linear_classifier(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e,
                                       ValueId x, std::vector<ValueId>& outputs);
absl::Status convert_linear_regressor(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e,
                                      ValueId x, std::vector<ValueId>& outputs);
absl::Status convert_svm_classifier(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e,
                                    ValueId x, std::vector<ValueId>& outputs);
absl::Status convert_svm_regressor(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e,
                                   ValueId x, std::vector<ValueId>& outputs);
absl::Status convert_normalizer(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e, ValueId x,
                                std::vector<ValueId>& outputs);

}  // namespace ml
}  // namespace collage
