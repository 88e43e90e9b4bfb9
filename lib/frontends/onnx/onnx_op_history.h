// Which version of an ONNX operator a model means: the newest version of the operator not newer
// than the model's opset of the operator's domain (ONNX's own rule), from the table of every
// operator version that make_op_history.py writes from the pinned onnx wheel.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace collage::onnx_import {

// The newest opsets the table knows, of the default domain and of ai.onnx.ml.
int newest_known_opset(std::string_view domain);

// The version of operator `op` of `domain` ("" or "ai.onnx.ml") at `opset`. Errors name the
// operator and say why: NotFound when ONNX (up to the newest known opset) has no such operator,
// InvalidArgument when it does not exist yet at `opset` or was removed at or before it.
absl::StatusOr<int> op_version(std::string_view domain, std::string_view op, int opset);

}  // namespace collage::onnx_import
