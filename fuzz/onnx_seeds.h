// Fuzzing seeds from real models: the structure of a model without the bulk of its weights.
#pragma once

#include <onnx/onnx_pb.h>

namespace collage::fuzz {

// Replaces every initializer larger than `max_bytes` (or held as external data) by a
// ConstantOfShape node of the same shape and element type, so that a 100 MB model becomes a
// seed of a few kilobytes that still imports: its graph, attributes and small constants (shape
// arithmetic, axes, indices) stay as they were. Returns the number of initializers replaced.
int shrink_initializers(onnx::ModelProto& model, size_t max_bytes);

}  // namespace collage::fuzz
