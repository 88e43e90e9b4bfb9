// Conversion of ONNX TensorProto values (initializers, Constant and attribute tensors) to Tensors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "collage/tensor.h"

namespace collage::onnx_import {

// Where a tensor's bytes may come from besides the protobuf itself.
struct TensorSource {
  // Folder of the model file; external data is resolved relative to it. Empty: external data is
  // refused (a model imported from memory without a folder).
  std::filesystem::path base_dir;
  // How the model is named in messages (its path, or "the model buffer").
  std::string model_label;
};

// "FLOAT", "UINT8", ... or "type 42" for values this ONNX version does not know.
std::string onnx_type_name(int32_t elem_type);

// The collage element type of an ONNX element type. Types collage cannot hold (UINT8, DOUBLE,
// STRING, complex, ...) are an Unimplemented error naming `what` (e.g. "tensor 'w'").
absl::StatusOr<DType> dtype_from_onnx(int32_t elem_type, std::string_view what);

// The ONNX element type of a collage dtype (for Cast's `to`, the inverse of dtype_from_onnx).
int32_t onnx_type_of(DType t);

// Decodes a TensorProto: raw_data, the typed repeated fields, or external data
// (data_location EXTERNAL with `location`, `offset`, `length`). Errors name the tensor and, for
// external data, the file; the location must stay inside `source.base_dir`.
absl::StatusOr<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const TensorSource& source);

}  // namespace collage::onnx_import
