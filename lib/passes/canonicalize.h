// Canonicalisation: replaces exporters' decompositions (LayerNorm, GELU) with single operators.
#pragma once

#include "passes/rewrite.h"

namespace collage::passes {

// Applies layer_norm_patterns() and gelu_patterns() (canonical_patterns.h). Intermediate values of
// a decomposition must have no reader outside it, and its constants must match (within
// kPatternConstantTolerance); otherwise it stays as it is. Returns nullopt when nothing matched.
PassResult canonicalize(const Context& ctx, const Graph& g, const RewriteOptions& options = {});

}  // namespace collage::passes
