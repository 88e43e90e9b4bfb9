// The schedules of pooling groups over values stored in channel blocks (an AVX2 target's 8
// channels, AVX-512's 16): a vector of a block's channels per window tap (MaxPool, AveragePool)
// or per position summed (GlobalAveragePool).
#pragma once

#include "absl/status/statusor.h"
#include "collage/te_ops.h"

namespace collage::te_ops {

// MaxPool or AveragePool, blocked input and output: the window's maximum (or sum, divided by its
// count at the store) is a vector over the channels of a block, the taps a loop around it (the
// default schedule vectorizes the output row, which a strided or padded window reads by gathers and
// clamps, so it ran scalar: 2 ms for GoogLeNet's 3x3 pool of 256 x 28 x 28 on the AVX2 target).
// Parallel over the channel blocks and rows. A plain input or output takes the default schedule.
absl::StatusOr<ScheduledGroup> schedule_pool(const AnchorGroup& group);

// GlobalAveragePool reading a blocked input (its [N, C, 1, 1] output plain): the sum of a block of
// channels is a vector accumulated over the positions (the default schedule reduces one channel
// at a time, reading every 8th or 16th float of the block with a scalar add: 0.16 ms for
// RegNetY's 48 x 28 x 28 squeeze-and-excitation pool on the AVX2 target). Parallel over the
// channel blocks when the input is large. Any other GlobalAveragePool group takes the default
// schedule.
absl::StatusOr<ScheduledGroup> schedule_global_pool(const AnchorGroup& group);

}  // namespace collage::te_ops
