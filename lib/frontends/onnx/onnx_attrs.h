// Conversion of ONNX node attributes to collage's untyped attribute map.
#pragma once

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "collage/attrs.h"
#include "frontends/onnx/onnx_tensor.h"

namespace collage::onnx_import {

// Converts every attribute of `node` (ints, floats, strings, their lists, and tensors). Graph,
// sparse-tensor, type and string-list attributes are an Unimplemented error naming the
// attribute; `who` ("Conv 'conv1'") prefixes messages.
absl::StatusOr<AttrMap> convert_attributes(const onnx::NodeProto& node, const TensorSource& source,
                                           std::string_view who);

}  // namespace collage::onnx_import
