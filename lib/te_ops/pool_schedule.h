// The schedule of a MaxPool group whose input and output are stored in channel blocks (an AVX2
// target's 8 channels, AVX-512's 16): a vector of a block's channels per window tap.
#pragma once

#include "absl/status/statusor.h"
#include "collage/te_ops.h"

namespace collage::te_ops {

// Blocked input and output: the window's maximum is a vector over the channels of a block, the
// taps a loop around it (the default schedule vectorizes the output row, which a strided or
// padded window reads by gathers and clamps, so it ran scalar: 2 ms for GoogLeNet's 3x3 pool of
// 256 x 28 x 28 on the AVX2 target). Parallel over the channel blocks and rows. A plain input or
// output takes the default schedule.
absl::StatusOr<ScheduledGroup> schedule_pool(const AnchorGroup& group);

}  // namespace collage::te_ops
