// Splitting a large DynamicQuantizeLinear into kernels that each run on every thread.
#pragma once

#include "passes/rewrite.h"

namespace collage::passes {

// The rewrite pattern: DynamicQuantizeLinear(x) on an f32 x of static shape with at least 65,536
// values becomes DynamicQuantizeRange(x) in chunks of one axis (a few, with at least 16 trailing
// values per row), DynamicQuantizeParams of that range (y_scale, y_zero_point) and
// QuantizeLinear(x, y_scale, y_zero_point) (y): the same values, computed the same way, but the
// range and the quantization are each a parallel loop, where one node has to read the whole
// range before it quantizes. Smaller tensors, and shapes whose axes do not split, stay one node.
RewritePattern split_dynamic_quantize_pattern();

// Applies split_dynamic_quantize_pattern everywhere. Returns nullopt when nothing was split.
PassResult split_dynamic_quantize(const Context& ctx, const Graph& g,
                                  const RewriteOptions& options = {});

}  // namespace collage::passes
