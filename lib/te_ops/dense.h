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

// Columns of B's panels for an output of `n` columns on `target`: the width of the register
// tile, two f32 vectors (32 with AVX-512, 16 with AVX2), one vector when n is narrower.
int64_t panel_columns(const codegen::TargetSpec& target, int64_t n);

// The ComputeFns of MatMul and Gemm, B packed into panel_columns(target, n) column panels.
ComputeFn matmul_compute(const codegen::TargetSpec& target);
ComputeFn gemm_compute(const codegen::TargetSpec& target);

// MatMul on f64 (lib/te_ops/matmul_generic.cpp), for the default schedule.
absl::StatusOr<std::vector<te::Tensor>> generic_matmul(const Graph& g, const Node& node,
                                                       std::span<const te::Tensor> inputs);

// The schedule template of a group anchored at a MatMul or Gemm built by the computes above.
absl::StatusOr<tune::ScheduleTemplate> schedule_template(const AnchorGroup& group);

}  // namespace collage::te_ops::dense
