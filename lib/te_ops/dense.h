// Dense operators in tensor expressions: MatMul (numpy semantics: 1-D operands, batch
// broadcasting), Gemm (alpha, beta, transA/B, broadcast C) and batched MatMul, computed against B
// packed into column panels, with a tunable register-tiled schedule template.
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/te.h"
#include "collage/te_ops.h"
#include "tune/template.h"

namespace collage::te_ops::dense {

// The ComputeFns of MatMul and Gemm.
absl::StatusOr<std::vector<te::Tensor>> matmul_compute(const Graph& graph, const Node& node,
                                                       std::span<const te::Tensor> inputs);
absl::StatusOr<std::vector<te::Tensor>> gemm_compute(const Graph& graph, const Node& node,
                                                     std::span<const te::Tensor> inputs);

// The schedule template of a group anchored at a MatMul or Gemm built by the computes above.
absl::StatusOr<tune::ScheduleTemplate> schedule_template(const AnchorGroup& group);

}  // namespace collage::te_ops::dense
