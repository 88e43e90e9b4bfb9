// schedule_dynamic_quantize: vectorized min/max and quantization in one task.
#include "te_ops/quantize_schedule.h"

#include <algorithm>
#include <vector>

#include "te_ops/default_schedule.h"

namespace collage::te_ops {

absl::StatusOr<ScheduledGroup> schedule_dynamic_quantize(const AnchorGroup& group) {
  ScheduledGroup out{te::create_schedule(group.outputs), {}};
  te::Schedule& s = out.schedule;
  const int lanes = std::max(1, group.target.vector_bytes() / 4);
  for (const te::Tensor& t : s.stage_tensors()) {
    if (t.op_kind() != te::OpKind::compute) continue;
    if (is_reduction(t)) {
      // The partial min/max (x's trailing axes, reduced over the leading ones): the reduction
      // loops outside, so x is read once in order into accumulators that stay in cache, a vector
      // of the last axis at a time. The final reductions over those are short loops.
      // The kept axes are fused first, so that vectors do not end in a tail at each row.
      const int rank = t.ndim();
      if (rank == 0) continue;
      int64_t extent = 1;
      for (int64_t d : t.shape()) extent *= d;
      if (extent < lanes) continue;
      te::Stage stage = s[t];
      te::IterVar kept = t.axis(0);
      for (int k = 1; k < rank; ++k) kept = stage.fuse(kept, t.axis(k));
      auto [io, ii] = stage.split(kept, lanes);
      std::vector<te::IterVar> order;
      for (size_t r = 0; r < t->reduce_axis.size(); ++r)
        order.push_back(t.reduce_axis(static_cast<int>(r)));
      order.push_back(io);
      order.push_back(ii);
      stage.reorder(order);
      stage.vectorize(ii);
      continue;
    }
    // The scale and zero point (one value each) stay loops of their own at the top.
    const int rank = t.ndim();
    if (rank == 0) continue;
    // The quantized values: inner axes fused until a few vectors long, then vectorized.
    te::Stage stage = s[t];
    int first = rank - 1;
    int64_t extent = t.shape()[rank - 1];
    while (first > 0 && extent < 4 * lanes) extent *= t.shape()[--first];
    te::IterVar inner = t.axis(first);
    for (int k = first + 1; k < rank; ++k) inner = stage.fuse(inner, t.axis(k));
    if (extent >= lanes) stage.vectorize(stage.split(inner, lanes).second);
  }
  return out;
}

}  // namespace collage::te_ops
