// Winograd convolution F(m x m, 3 x 3) in tensor expressions, for 3 x 3 stride-1 dilation-1
// convolutions of one group: the weight transformed once (a pre-packed constant), the input
// transformed per tile of m x m outputs, one batched GEMM per transform point over the input
// channels (vectors of a block of output channels: 16, or 8 where the group passes AVX2's
// 8-channel blocks), and the output transform inlined into the conv
// group's epilogue. A Conv definition that computes eligible convolutions this way and every
// other one as conv::compute does, for the native backend to build beside the direct one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/te.h"
#include "collage/te_ops.h"
#include "te_ops/conv.h"
#include "tune/template.h"

namespace collage::te_ops::winograd {

// Whether a convolution of this geometry has a Winograd form: 2-D, 3 x 3, stride 1, dilation 1,
// one group.
bool applies(const conv::Geometry& g);

// The Conv compute with output tiles of `tile` x `tile` (2 or 4) where applies() holds, else
// conv::compute.
absl::StatusOr<std::vector<te::Tensor>> compute(const Graph& graph, const Node& node,
                                                std::span<const te::Tensor> inputs, int tile);

// The schedule template of a group anchored at a Conv built by compute(): for the Winograd form
// its own template, else conv::schedule_template.
absl::StatusOr<tune::ScheduleTemplate> schedule_template(const AnchorGroup& group);

// A Conv definition (compute and schedule) for TeOpRegistry::add("Conv", ...) that uses the
// Winograd form with `tile` x `tile` output tiles wherever applies() holds.
TeOpDef conv_def(int tile);

}  // namespace collage::te_ops::winograd
