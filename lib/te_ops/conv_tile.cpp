// The blocked convolution's default register tile (conv_tile.h).
#include "te_ops/conv_tile.h"

#include <algorithm>

namespace collage::te_ops::conv {
namespace {

constexpr double kFmaPerCycle = 2;
constexpr double kLoadsPerCycle = 2;
constexpr double kFmaLatency = 4;
constexpr double kFmaLatencyWithSlack = 4.5;
// A tile with a tail replaces the divisor tile only when estimated this much faster: the
// estimate ignores the tail's guarded stores and the overlapping tile's extra reads.
constexpr double kTailGain = 1.15;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

double tile_cycles(int64_t ow, int64_t mb, int64_t block_vectors, RegisterTile tile, int lanes) {
  const double broadcasts_per_cycle = lanes == 8 ? 1 : kLoadsPerCycle;
  const double latency = lanes == 8 ? kFmaLatencyWithSlack : kFmaLatency;
  const double fmas = double(tile.ow_t) * tile.oc_t * block_vectors;
  const double loads = double(tile.ow_t) + double(tile.oc_t) * block_vectors;
  const double step = std::max({fmas / kFmaPerCycle, loads / kLoadsPerCycle,
                                double(tile.ow_t) / broadcasts_per_cycle, latency});
  return step * double(ceil_div(ow, tile.ow_t)) * double(ceil_div(mb, tile.oc_t));
}

RegisterTile default_register_tile(int64_t ow, int64_t mb, int64_t block_vectors, int64_t budget,
                                   int64_t max_ow_t, int64_t max_oc_t, int lanes,
                                   bool channel_tail) {
  const int64_t tiles_max = std::max<int64_t>(budget / std::max<int64_t>(block_vectors, 1), 1);
  RegisterTile divisor, any;
  double any_cycles = tile_cycles(ow, mb, block_vectors, any, lanes);
  for (int64_t o = 1; o <= std::min(ow, max_ow_t); ++o) {
    for (int64_t c = 1; c <= std::min(mb, max_oc_t); ++c) {
      if (o * c > tiles_max || (!channel_tail && mb % c != 0)) continue;
      const RegisterTile t{o, c};
      const int64_t area = o * c, best = divisor.ow_t * divisor.oc_t;
      if (ow % o == 0 && mb % c == 0 && (area > best || (area == best && c > divisor.oc_t)))
        divisor = t;
      const double cycles = tile_cycles(ow, mb, block_vectors, t, lanes);
      if (cycles < any_cycles) {
        any = t;
        any_cycles = cycles;
      }
    }
  }
  return tile_cycles(ow, mb, block_vectors, divisor, lanes) > kTailGain * any_cycles ? any
                                                                                     : divisor;
}

RegisterTile flat_register_tile(int64_t positions, int64_t mb, int64_t block_vectors,
                                int64_t budget, int64_t max_oc_t, int lanes) {
  const int64_t tiles_max = std::max<int64_t>(budget / std::max<int64_t>(block_vectors, 1), 1);
  RegisterTile best;
  double best_cycles = tile_cycles(positions, mb, block_vectors, best, lanes);
  for (int64_t c = 1; c <= std::min(mb, max_oc_t); ++c) {
    if (mb % c != 0) continue;
    for (int64_t o = 1; o <= positions && o * c <= tiles_max; ++o) {
      const RegisterTile t{o, c};
      const double cycles = tile_cycles(positions, mb, block_vectors, t, lanes);
      // Ties go to more channel blocks (fewer broadcasts; 2 x 4 ran faster than 4 x 2).
      if (cycles <= best_cycles) {
        best = t;
        best_cycles = cycles;
      }
    }
  }
  return best;
}

}  // namespace collage::te_ops::conv
