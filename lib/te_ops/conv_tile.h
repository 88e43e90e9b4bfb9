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

}  // namespace collage::te_ops::conv
