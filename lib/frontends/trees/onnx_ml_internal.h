// Shared by the ONNX-ML tree-ensemble converters (onnx_ml.cpp: TreeEnsembleRegressor/Classifier;
// onnx_ml_tree_ensemble5.cpp: TreeEnsemble of ai.onnx.ml opset 5).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "collage/trees.h"

namespace collage {

// The margins of `m` on `x` (f32 [batch, >= m.num_features]): asks `choose` (when set) for the
// strategy at x's batch and adds the program. Errors name the node.
absl::StatusOr<ValueId> add_onnx_tree_margins(const onnx::NodeProto& node, GraphBuilder& b,
                                              ValueId x, TreeEnsemble& m,
                                              const TreeGraphOptions& options,
                                              const TreeStrategyChooser& choose);

// TreeEnsemble (ai.onnx.ml opset 5) on `x` (f32, f64 or f16 [batch, features]): `outputs` gets Y
// in x's type. InvalidArgument naming the node and attribute for a malformed node.
absl::Status convert_onnx_tree_ensemble5(const onnx::NodeProto& node, GraphBuilder& b, ValueId x,
                                         std::vector<ValueId>& outputs,
                                         const TreeGraphOptions& options,
                                         const TreeStrategyChooser& choose);

// The trees of a TreeEnsemble (opset 5) node as one model whose margins are Y before the
// aggregation of MIN/MAX and the post transform.
absl::StatusOr<TreeEnsemble> tree_ensemble5_from_onnx(const onnx::NodeProto& node);

}  // namespace collage
