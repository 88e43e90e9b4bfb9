// The rewrite patterns of canonicalisation: decomposed LayerNorm and GELU back to single operators.
#pragma once

#include <vector>

#include "passes/rewrite.h"

namespace collage::passes {

// Relative tolerance for the constants the patterns check (1, 0.5, sqrt(2), 1/sqrt(2)).
inline constexpr double kPatternConstantTolerance = 1e-5;

// PyTorch's LayerNorm export: d = x - ReduceMean(x); n = d / Sqrt(ReduceMean(Pow(d, 2)) + eps),
// then optionally * gamma and + beta, both constants, with both means over the same trailing
// axes, keepdims. Becomes LayerNormalization(x, gamma or ones, [beta]) over those axes. One
// pattern per root: Add (+ beta), Mul (* gamma) and Div (neither).
std::vector<RewritePattern> layer_norm_patterns();

// PyTorch's exact GELU export, 0.5 * x * (1 + erf(x / sqrt(2))), in the groupings
// (x * (1 + erf(.))) * 0.5 and (x * 0.5) * (1 + erf(.)), with x / sqrt(2) or x * (1 / sqrt(2)).
// Becomes Gelu(x) with approximate "none". Rooted at the last Mul.
std::vector<RewritePattern> gelu_patterns();

}  // namespace collage::passes
