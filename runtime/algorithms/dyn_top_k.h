// TopK's order (ONNX opset 1-24), shared by the reference kernel (lib/ops/tensor_topk.cpp) and the
// runtime's dynamic module: header-only, over one row of values along the axis.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

namespace collage::rt_dynamic {

// Puts into order[0 .. k) the indices of the k largest (or smallest) values of `row`, from the
// largest (smallest) down: NaN above every number, equal values in index order. `order` is
// resized to row.size(); its entries past k are unspecified.
template <typename T>
void top_k_order(const std::vector<T>& row, int64_t k, bool largest, std::vector<int64_t>& order) {
  order.resize(row.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  auto before = [&](int64_t i, int64_t j) {
    const T vi = row[i], vj = row[j];
    bool nan_i = false, nan_j = false;
    if constexpr (std::is_floating_point_v<T>) nan_i = std::isnan(vi), nan_j = std::isnan(vj);
    if (nan_i || nan_j) return nan_i && nan_j ? i < j : (largest ? nan_i : nan_j);
    if (vi != vj) return largest ? vi > vj : vi < vj;
    return i < j;
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
}

}  // namespace collage::rt_dynamic
