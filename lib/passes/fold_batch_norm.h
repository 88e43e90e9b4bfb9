// Batch-norm folding: merges an inference BatchNormalization into the Conv that feeds it.
#pragma once

#include "passes/rewrite.h"

namespace collage::passes {

// The rewrite pattern: BatchNormalization(Conv(X, W, [b]), scale, B, mean, var) with every
// parameter constant, in f32, and the Conv's output read by nothing else, becomes
// Conv(X, W * s, (b - mean) * s + B) with s = scale / sqrt(var + epsilon) per output channel.
RewritePattern batch_norm_into_conv_pattern();

// Applies batch_norm_into_conv_pattern everywhere. A BatchNormalization on constants is left for
// constant folding; any other stays as it is. Returns nullopt when nothing was folded.
PassResult fold_batch_norm(const Context& ctx, const Graph& g, const RewriteOptions& options = {});

}  // namespace collage::passes
