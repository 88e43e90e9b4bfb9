// Which channel-blocked layouts the dnnl backend takes at a group's boundary: oneDNN's direct
// convolutions, poolings and elementwise primitives run in nChw16c (AVX-512) and nChw8c (AVX2)
// themselves, so a group passes such values in place instead of reordering them in and out
// (Backend::accepts_layout).
#pragma once

#include "collage/graph.h"
#include "collage/layout.h"

namespace collage::dnnl_backend {

// Whether `v`, an input or the output of the standalone group `group` (f32), may be in `layout`:
// plain always; blocked by 8 or 16 channels when the group is one the backend runs (analyze_group)
// anchored at
//  - a Conv whose output channels, and for `v` its input, fill whole blocks per group (or that is
//    depthwise), `v` being its data input, its output or a same-shaped operand of its post-ops;
//  - a pooling, `v` being its data input or output;
//  - an elementwise or binary operator, `v` being the output or an input of the output's shape.
bool takes_layout(const Graph& group, ValueId v, const Layout& layout);

}  // namespace collage::dnnl_backend
