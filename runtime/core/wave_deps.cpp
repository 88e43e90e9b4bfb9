// kernel_dependencies: read-after-write through tensors, write-after-read and write-after-write
// through shared arena bytes.
#include <algorithm>

#include "wave_schedule.h"

namespace collage::waves {
namespace {

// Two accesses touch the same memory: the same tensor, or arena ranges that overlap.
bool same_memory(const std::vector<TensorSpan>& tensors, uint32_t a, uint32_t b) {
  if (a == b) return true;
  const TensorSpan& x = tensors[a];
  const TensorSpan& y = tensors[b];
  if (!x.arena || !y.arena || x.begin == x.end || y.begin == y.end) return false;
  return x.begin < y.end && y.begin < x.end;
}

bool touches(const std::vector<TensorSpan>& tensors, const std::vector<uint32_t>& ids,
             uint32_t t) {
  return std::any_of(ids.begin(), ids.end(),
                     [&](uint32_t u) { return same_memory(tensors, u, t); });
}

}  // namespace

std::vector<std::vector<uint32_t>> kernel_dependencies(const std::vector<KernelAccess>& kernels,
                                                       const std::vector<TensorSpan>& tensors) {
  std::vector<std::vector<uint32_t>> deps(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    const KernelAccess& later = kernels[k];
    for (size_t j = 0; j < k; ++j) {
      const KernelAccess& earlier = kernels[j];
      bool dep = false;
      // Read after write: exactly the tensor (distinct tensors never alias while both live).
      for (uint32_t t : later.reads)
        dep = dep || std::find(earlier.writes.begin(), earlier.writes.end(), t) !=
                         earlier.writes.end();
      for (uint32_t t : later.writes)
        dep = dep || touches(tensors, earlier.reads, t) || touches(tensors, earlier.writes, t);
      if (dep) deps[k].push_back(static_cast<uint32_t>(j));
    }
  }
  return deps;
}

}  // namespace collage::waves
