// The refusal of string values by compiled models (artifacts, the C ABI, in-process placements).
#pragma once

#include "absl/status/status.h"
#include "collage/graph.h"

namespace collage {

// Unimplemented naming the first string (str) value of `graph`: strings have no arena layout,
// no collage_dtype_t and no DLPack type, so no compiled model holds one (docs/onnx.md).
absl::Status refuse_string_values(const Graph& graph);

}  // namespace collage
