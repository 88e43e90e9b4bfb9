// A region (a standalone group graph) written as an ONNX model, the form in which the openvino
// backend hands it to OpenVINO (its ONNX frontend reads it). The IR's operators keep ONNX's
// names, attributes and semantics; the values ONNX passes as inputs in newer opsets (Reshape's
// shape, Slice's starts and ends, Clip's bounds, ...) and the IR holds as attributes become
// constant inputs again.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "collage/graph.h"

namespace collage::openvino_backend {

// The ai.onnx opset the model is written in.
inline constexpr int kRegionOpset = 20;

// Whether the writer knows an ONNX form of operator `op`.
bool has_onnx_form(std::string_view op);

// The serialized ModelProto of `group`: its inputs and outputs in order (every value named
// "v<id>"), constants as initializers. Errors name the node whose attributes have no ONNX form.
absl::StatusOr<std::string> region_to_onnx(const Graph& group);

}  // namespace collage::openvino_backend
