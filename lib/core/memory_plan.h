// Arena planning: offsets for the intermediate tensors of a schedule (an artifact's, the
// in-process executor's), letting tensors whose lifetimes do not overlap share memory.
#pragma once

#include <cstdint>
#include <vector>

namespace collage {

// A buffer needed from step `first` to step `last` (inclusive; steps are kernels in execution
// order). Buffers alive at the same step never share memory, so a kernel's outputs never alias
// its inputs.
struct BufferLifetime {
  uint64_t bytes = 0;
  int32_t first = 0;
  int32_t last = 0;
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per buffer, multiples of `alignment`
  uint64_t peak_bytes = 0;        // arena size: the highest end of any buffer
  uint64_t unshared_bytes = 0;    // sum of the aligned sizes (what no reuse would take)
};

// Greedy best fit by size (TFLite's "greedy by size"): buffers are placed largest first, each in
// the smallest gap left between the buffers already placed whose lifetimes overlap its own, or
// after the last of them. Sizes are rounded up to `alignment`. Deterministic: ties are broken by
// first step, then by buffer index.
MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, uint64_t alignment = 64);

}  // namespace collage
