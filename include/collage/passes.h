// The graph optimisation pipeline run before placement.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "collage/graph.h"

namespace collage {

struct PassOptions {
  bool fold_constants = true;
  bool fold_batch_norm = true;
  bool canonicalize = true;  // recognise LayerNorm and GELU subgraphs
  // DynamicQuantizeLinear on a large tensor as range, scale and quantization kernels
  bool split_dynamic_quantize = true;
  bool eliminate_dead_code = true;
  // Constant folding evaluates no node whose outputs are larger than this (bytes).
  size_t max_folded_bytes = size_t{64} << 20;
  // Called with each pass's name and result, e.g. to print the IR after a pass.
  std::function<void(std::string_view pass, const Graph& g)> after_pass;
};

// Runs the pipeline: shape inference, constant folding, canonicalisation, batch-norm folding,
// the DynamicQuantizeLinear split, dead-code elimination; the options turn passes off. In debug
// builds the verifier runs after each pass. The input is not modified. Errors: a node whose shape
// inference fails (naming it), or an internal error naming the pass after which the graph no
// longer verifies.
absl::StatusOr<Graph> run_passes(const Context& ctx, const Graph& g, const PassOptions& options = {});

}  // namespace collage
