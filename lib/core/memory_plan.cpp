// Greedy best-fit-by-size arena planning.
#include "core/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace collage {

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, uint64_t alignment) {
  const size_t n = buffers.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<uint64_t> size(n);
  for (size_t i = 0; i < n; ++i) {
    size[i] = (buffers[i].bytes + alignment - 1) / alignment * alignment;
    plan.unshared_bytes += size[i];
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (size[a] != size[b]) return size[a] > size[b];
    return buffers[a].first < buffers[b].first;
  });

  std::vector<size_t> placed;      // buffer indices, in placement order
  std::vector<size_t> neighbours;  // placed buffers overlapping the current one in time
  for (size_t i : order) {
    if (size[i] == 0) continue;  // empty buffers sit at offset 0; nothing is read or written
    neighbours.clear();
    for (size_t p : placed)
      if (buffers[p].first <= buffers[i].last && buffers[i].first <= buffers[p].last)
        neighbours.push_back(p);
    std::sort(neighbours.begin(), neighbours.end(), [&](size_t a, size_t b) {
      return plan.offsets[a] != plan.offsets[b] ? plan.offsets[a] < plan.offsets[b] : a < b;
    });
    uint64_t cursor = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (size_t p : neighbours) {
      if (plan.offsets[p] > cursor) {
        const uint64_t gap = plan.offsets[p] - cursor;
        if (gap >= size[i] && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, plan.offsets[p] + size[p]);
    }
    plan.offsets[i] = best != UINT64_MAX ? best : cursor;
    plan.peak_bytes = std::max(plan.peak_bytes, plan.offsets[i] + size[i]);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace collage
