// Structure-aware mutation of ONNX models for the importer fuzzer: changes that keep the protobuf
// well formed and mostly keep the graph connected (operator types, attributes, inputs, shapes,
// element types, initializers, opsets, node order), so that mutations reach the operator
// conversions, shape inference and the kernels instead of stopping at the protobuf parser.
#pragma once

#include <cstdint>
#include <random>

#include <onnx/onnx_pb.h>

namespace collage::fuzz {

using Rng = std::mt19937_64;

// Applies one to three random structural changes to `model`.
void mutate_model(onnx::ModelProto& model, Rng& rng);

// Copies a random run of nodes (with the initializers they read) from `donor` into `model`,
// rewiring their inputs to tensors `model` has where the donor's names are unknown to it.
void cross_models(onnx::ModelProto& model, const onnx::ModelProto& donor, Rng& rng);

}  // namespace collage::fuzz
