// ONNX import: reads an ONNX model into a collage Graph. Each node's operator version is resolved
// from the model's opset (ONNX's rule: the newest version not newer than the opset) and imported
// with that version's semantics; lib/frontends/onnx says which versions each operator handles.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "collage/graph.h"

namespace collage {

struct TreeEnsemble;                // collage/trees.h
enum class TreeStrategy : uint8_t;  // collage/trees.h

// Chooses the strategy of the tree ensemble of an ai.onnx.ml TreeEnsembleRegressor/Classifier
// node: `node` names it as import errors do (its name, else its first output), `model` is the
// node's trees (margins, with the width of the node's input as its feature count) and `batch`
// the first dimension of that input. An error fails the import.
using TreeStrategyChooser = std::function<absl::StatusOr<TreeStrategy>(
    std::string_view node, const TreeEnsemble& model, int64_t batch)>;

// What an ai.onnx.ml ZipMap node becomes. ZipMap turns a classifier's probabilities into a
// sequence of maps (one {label: probability} per row), which collage's tensors cannot hold.
enum class ZipMapMode {
  refuse,         // an Unimplemented error naming the node and this option (the default)
  probabilities,  // dropped: its input, the f32 [batch, classes] probabilities in label order,
                  // takes the place of its output, as skl2onnx exports with zipmap=False
};

struct OnnxImportOptions {
  // Shapes for graph inputs, by input name. Required for inputs with a symbolic or unknown
  // dimension; when given for a fully static input it must agree with the model.
  std::map<std::string, Shape> input_shapes;
  // The strategy of each tree-ensemble node; empty: the fixed rule (TreeStrategy::automatic).
  TreeStrategyChooser tree_strategy;
  // A node whose inputs are all constants is evaluated at import time only when its outputs
  // take at most this many bytes; a larger one stays a node.
  size_t max_folded_bytes = size_t{64} << 20;
  ZipMapMode zipmap = ZipMapMode::refuse;
};

// Imports a model file. External-data weight files are resolved relative to the model's folder;
// a location that escapes that folder is refused. Nodes whose inputs are all constants (and
// Shape of a statically shaped value) are evaluated at import time, so Shape->Gather->Concat->
// Reshape chains fold away and shape-like operator inputs (Reshape's shape, Slice's starts, a
// Reduce's axes, ...) become attributes. One computed at run time stays an input of the node
// (OpDef::attr_inputs): the node's output shape is then known only when the model runs. Graph input and output values keep their ONNX names.
// Errors name the file, and the node (op type, node name, opset) or tensor at fault; nothing
// half-built is returned. Codes: NotFound for a missing model or external-data file;
// Unimplemented for valid ONNX that collage does not handle (an operator, domain, opset, element
// type or training-only output); InvalidArgument for everything else (malformed protobuf,
// missing tensor, symbolic input dimension without a shape in `options`, bad external data).
absl::StatusOr<Graph> import_onnx_file(const Context& ctx, const std::filesystem::path& path,
                                       const OnnxImportOptions& options = {});

// Imports a model held in memory. `base_dir` is where external data is looked up; if empty, a
// model that refers to external data is refused.
absl::StatusOr<Graph> import_onnx_buffer(const Context& ctx, std::span<const uint8_t> bytes,
                                         const OnnxImportOptions& options = {},
                                         const std::filesystem::path& base_dir = {});

}  // namespace collage
