// The default register tile of the blocked convolution's micro-kernel: ow_t output columns x oc_t
// channel blocks, chosen by a cycle estimate so that widths with few divisors (SqueezeNet's 13,
// GoogLeNet's 7 and 14) still get a tile that fills the vector registers.
#pragma once

#include <cstdint>

namespace collage::te_ops::conv {

struct RegisterTile {
  int64_t ow_t = 1;  // output columns
  int64_t oc_t = 1;  // channel blocks
};

// Estimated cycles of one input channel over `ow` columns x `mb` channel blocks with `tile`, on a
// target of `lanes` f32 lanes: every step of the micro-kernel issues ow_t * oc_t * block_vectors
// FMAs, ow_t broadcasts and oc_t * block_vectors weight loads (two FMAs and two loads per cycle)
// and cannot finish before its accumulators' previous FMAs do; a tile that does not divide its
// extent computes the last tile whole (the tail overlaps the tile before it). With 8 lanes, as
// measured on the AVX2 host (Zen 3): at most one broadcast per cycle (a 12 x 1 pointwise tile ran
// at half the speed of 6 x 2 and 3 x 4, whose FMAs and loads it matches), and 8 accumulators a
// little short of hiding the FMA latency (4 x 2 and 2 x 4 ran 5-25 % slower than 3 x 4). Other
// targets keep two loads of any kind per cycle and a latency of 4 cycles (not measured here).
double tile_cycles(int64_t ow, int64_t mb, int64_t block_vectors, RegisterTile tile, int lanes);

// The tile of at most `budget` accumulator vectors for `ow` columns x `mb` channel blocks of
// `block_vectors` vectors each, ow_t <= max_ow_t and oc_t <= max_oc_t: the largest tile whose
// sizes divide their extents (the tile the blocked schedule always took), unless a tile with a
// tail is estimated (tile_cycles) at least 15 % faster. Without `channel_tail`, oc_t divides mb
// (the channel blocks of one group of a grouped convolution: a tile across two groups loads the
// broadcasts of both).
RegisterTile default_register_tile(int64_t ow, int64_t mb, int64_t block_vectors, int64_t budget,
                                   int64_t max_ow_t, int64_t max_oc_t, int lanes,
                                   bool channel_tail);

// The tile of a compute over flattened positions (conv.h: runs_flat) of `positions` x `mb` channel
// blocks, at most `budget` accumulator vectors and `max_oc_t` blocks: the fastest by tile_cycles
// of any ow_t (only the last of all the positions' tiles has a tail) and an oc_t that divides mb
// (a tile with a channel tail ran 1.2-1.75x slower: cnn_layer_bench); ties go to more channel
// blocks (fewer broadcasts: 2 x 4 ran faster than 4 x 2).
RegisterTile flat_register_tile(int64_t positions, int64_t mb, int64_t block_vectors,
                                int64_t budget, int64_t max_oc_t, int lanes);

}  // namespace collage::te_ops::conv
