// Unique (ONNX opset 11-24), the grouping shared by the reference kernel (lib/ops) and the
// runtime's dynamic module: header-only, over slices the caller compares.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace collage::rt_dynamic {

struct UniqueGroups {
  std::vector<int64_t> first;    // per unique slice, in output order: where it first occurs
  std::vector<int64_t> inverse;  // per input slice: its unique slice's output position
  std::vector<int64_t> counts;   // per unique slice: how often it occurs
};

// Groups slices 0 .. n-1 that compare equal. `less(a, b)` is a strict weak order on slice
// indices and `equal(a, b)` its equivalence. `sorted`: output in ascending order of the slices;
// otherwise in order of first occurrence.
template <class Less, class Equal>
UniqueGroups unique_groups(int64_t n, bool sorted, Less less, Equal equal) {
  UniqueGroups g;
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);
  std::vector<int64_t> group_of(n);
  std::vector<int64_t> group_first, group_count;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = order[k];
    if (k == 0 || !equal(order[k - 1], i)) {
      group_first.push_back(i);  // stable: the first index in sorted order is the smallest
      group_count.push_back(0);
    }
    group_of[i] = static_cast<int64_t>(group_first.size()) - 1;
    ++group_count.back();
  }
  const auto groups = static_cast<int64_t>(group_first.size());
  std::vector<int64_t> position(groups);
  std::iota(position.begin(), position.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(groups);
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return group_first[a] < group_first[b]; });
    for (int64_t p = 0; p < groups; ++p) position[by_first[p]] = p;
  }
  g.first.resize(groups);
  g.counts.resize(groups);
  for (int64_t q = 0; q < groups; ++q) {
    g.first[position[q]] = group_first[q];
    g.counts[position[q]] = group_count[q];
  }
  g.inverse.resize(n);
  for (int64_t i = 0; i < n; ++i) g.inverse[i] = position[group_of[i]];
  return g;
}

}  // namespace collage::rt_dynamic
