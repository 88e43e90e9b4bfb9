// Shared by the Winograd compute and schedule: the stage tags and the tiling of a geometry.
#pragma once

#include <cstdint>

#include "te_ops/conv.h"

namespace collage::te_ops::winograd {

inline constexpr char kInputRowsTag[] = "wino_input_rows";
inline constexpr char kInputTag[] = "wino_input";
inline constexpr char kWeightTag[] = "wino_weight";
inline constexpr char kGemmTag[] = "wino_gemm";
inline constexpr char kOutputTag[] = "wino_output";

// Output tiles of m x m read alpha = m + 2 input rows and columns; th x tw tiles cover the output.
// Channels are blocked by the geometry's block (conv::compute_block: 8 where the group passes
// AVX2's 8-channel blocks, so that the pack and the output read and write them a vector at a time).
struct Tiling {
  int m = 4, alpha = 6;
  int64_t th = 1, tw = 1;
  int64_t ib = 16, cb = 1;  // input channels per block, input blocks
  int64_t block = 16;       // output channels per block (the group's channel block: 16 or 8)
  int64_t mb = 1;           // output blocks
};

Tiling tiling(const conv::Geometry& g, int tile);

}  // namespace collage::te_ops::winograd
