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

// Estimated cycles of one input channel over `ow` columns x `mb` channel blocks with `tile`:
// every step of the micro-kernel issues ow_t * oc_t * block_vectors FMAs, ow_t broadcasts and
// oc_t * block_vectors weight loads (two of each per cycle) and cannot finish before its
// accumulators' previous FMAs do (4 cycles); a tile that does not divide its extent computes the
// last tile whole (the tail overlaps the tile before it).
double tile_cycles(int64_t ow, int64_t mb, int64_t block_vectors, RegisterTile tile);

// The tile of at most `budget` accumulator vectors for `ow` columns x `mb` channel blocks of
// `block_vectors` vectors each, ow_t <= max_ow_t and oc_t <= max_oc_t: the largest tile whose
// sizes divide their extents (the tile the blocked schedule always took), unless a tile with a
// tail is estimated (tile_cycles) at least 15 % faster.
RegisterTile default_register_tile(int64_t ow, int64_t mb, int64_t block_vectors, int64_t budget,
                                   int64_t max_ow_t, int64_t max_oc_t);

// The tile of a compute over flattened positions (conv.h: runs_flat) of `positions` x `mb` channel
// blocks of `block_vectors` vectors each, at most `budget` accumulator vectors and `max_oc_t`
// blocks: any ow_t (only the last of all the positions' tiles has a tail), an oc_t that divides
// mb (a tile with a channel tail ran 1.2-1.75x slower: cnn_layer_bench), by flat_tile_cycles.
RegisterTile flat_register_tile(int64_t positions, int64_t mb, int64_t block_vectors,
                                int64_t budget, int64_t max_oc_t, int lanes);

// Estimated cycles of one input channel over all positions with `tile` (flat_register_tile):
// tile_cycles' issue limits, and with 8-lane vectors at most one broadcast per cycle (on the AVX2
// host, Zen 3, a 12 x 1 tile ran at half the speed of 6 x 2 and 3 x 4, whose FMAs and loads it
// matches), and 8 accumulators short of hiding the FMA latency (4 x 2 and 2 x 4 ran 5-25 %
// slower than 3 x 4).
double flat_tile_cycles(int64_t positions, int64_t mb, int64_t block_vectors, RegisterTile tile,
                        int lanes);

}  // namespace collage::te_ops::conv
