// Which blocked layouts the native backend takes at a group's boundary: a group anchored at a
// convolution whose compute works in 16- (or 8-) channel blocks reads its data and writes its
// result in that block order without the transposing pack and unpack, an elementwise group
// computes in whatever order its values are stored, and a MaxPool a vector of channels per tap
// (Backend::accepts_layout).
#pragma once

#include "collage/graph.h"
#include "collage/layout.h"

namespace collage::native {

// Whether `v`, an input or the output of the standalone group `group`, may be in `layout`: plain
// always; channel-blocked by a conv compute's block (te_ops::conv::kBlock, or kSmallBlock, in
// which the group's convolutions then compute: te_ops::conv::compute_block) when the group holds
// exactly one anchor, a Conv with the blocked or depthwise compute, and `v` is the Conv's data
// input or a same-shaped operand of its epilogue (read by every node of the group that reads it
// in one of these ways), or the group's only output, with channels a multiple of the block; and
// for a group of elementwise and broadcast operators alone, its only output and every input of
// the output's shape; for a group of one f32 MaxPool without Indices, its input and output; for
// a group of one f32 Concat along the channels of 4-D values whose inputs are whole blocks, all.
bool takes_layout(const Graph& group, ValueId v, const Layout& layout);

}  // namespace collage::native
