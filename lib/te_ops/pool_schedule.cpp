// schedule_pool and schedule_global_pool: MaxPool, AveragePool and GlobalAveragePool over values
// stored in channel blocks, a vector of a block's channels at a time.
#include "te_ops/pool_schedule.h"

#include <algorithm>

#include "collage/tensor.h"
#include "te_ops/default_schedule.h"
#include "te_ops/layout_views.h"

namespace collage::te_ops {
namespace {

// Below this many output elements a kernel runs as one task (as the default schedule).
constexpr int64_t kMinParallelElements = 4096;
// A global pool reading fewer input elements runs as one task (its vector sums take a few
// microseconds: RegNetY's 104 x 14 x 14 pool 6.5 us on one thread; above it, EfficientNet-B0's
// 672 x 7 x 7 took 2.3 us and 1152 x 7 x 7 3.4 us on two, AVX2 host).
constexpr int64_t kMinParallelGlobalInput = 32768;

// The default schedule of a group these schedules do not take.
ScheduledGroup default_for(const AnchorGroup& group) {
  return ScheduledGroup{
      default_schedule(group.outputs, {group.target, group.num_threads, ScheduleLevel::full}), {}};
}

// A schedule of the group's outputs with every compute stage inlined but `out` and `reduction`.
te::Schedule inline_all_but(const AnchorGroup& group, const te::Tensor& out,
                            const te::Tensor& reduction) {
  te::Schedule s = te::create_schedule(group.outputs);
  for (const te::Tensor& t : s.stage_tensors())
    if (t.op_kind() == te::OpKind::compute && !t.same_as(out) && !t.same_as(reduction))
      s[t].compute_inline();
  return s;
}

// Splits `axis` of `stage` (a block of b channels) into vectors of `lanes`, the outer part
// unrolled, and vectorizes the inner part.
void vectorize_block(te::Stage& stage, te::IterVar axis, int64_t b, int lanes) {
  if (b > lanes) {
    auto [outer, inner] = stage.split(axis, lanes);
    stage.unroll(outer);
    axis = inner;
  }
  stage.vectorize(axis);
}

// Whether `reduction` reads only kernel arguments through a blocked logical view (layout_views.h).
bool reads_blocked(const te::Tensor& reduction) {
  const std::vector<te::Tensor> in = te::input_tensors(reduction);
  return !in.empty() && std::all_of(in.begin(), in.end(), [](const te::Tensor& t) {
    return t->tag == kLayoutViewTag;
  });
}

// The window's reduction: the anchor itself (MaxPool's maximum) or the sum an AveragePool divides
// by its count; undefined for anything else.
te::Tensor window_reduction(const te::Tensor& anchor) {
  if (is_reduction(anchor)) return anchor;
  const std::vector<te::Tensor> in = te::input_tensors(anchor);
  return in.size() == 1 && is_reduction(in[0]) ? in[0] : te::Tensor();
}

}  // namespace

absl::StatusOr<ScheduledGroup> schedule_pool(const AnchorGroup& group) {
  const te::Tensor pooled = window_reduction(group.anchor_output);
  const bool blocked = group.outputs.size() == 1 && pooled.defined() &&
                       stored_source(group.outputs[0]).same_as(group.anchor_output) &&
                       pooled.ndim() == 4 && reads_blocked(pooled);
  if (!blocked) return default_for(group);
  const te::Tensor& out = group.outputs[0];  // [N, C/b, OH, OW, b]
  const int64_t b = out.shape().back();
  const int lanes = std::max(1, group.target.vector_bytes() / 4);
  te::Schedule s = inline_all_but(group, out, pooled);
  te::Stage so = s[out];
  te::IterVar rows = so.fuse(so.fuse(out.axis(0), out.axis(1)), out.axis(2));
  vectorize_block(so, out.axis(4), b, lanes);
  if (group.num_threads > 1 && shape_numel(out.shape()) >= kMinParallelElements) so.parallel(rows);
  // The window's maximum (or sum) of one output position: the taps outside, the block's channels
  // inside; an AveragePool's division is inlined into the store.
  te::Stage sp = s[pooled];
  sp.compute_at(so, out.axis(3));
  std::vector<te::IterVar> order = {pooled.axis(0), pooled.axis(2), pooled.axis(3)};
  for (size_t r = 0; r < pooled->reduce_axis.size(); ++r)
    order.push_back(pooled.reduce_axis(static_cast<int>(r)));
  order.push_back(pooled.axis(1));
  sp.reorder(order);
  vectorize_block(sp, pooled.axis(1), b, lanes);
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), {}};
}

absl::StatusOr<ScheduledGroup> schedule_global_pool(const AnchorGroup& group) {
  const te::Tensor& mean = group.anchor_output;  // [N, C, 1, 1]: sum / (H * W)
  const std::vector<te::Tensor> sums = te::input_tensors(mean);
  const bool blocked = group.outputs.size() == 1 && group.outputs[0].same_as(mean) &&
                       mean.ndim() == 4 && sums.size() == 1 && is_reduction(sums[0]) &&
                       reads_blocked(sums[0]);
  // The view reads the stored argument [N, C/b, H, W, b]; channels in whole blocks only (a
  // partial last block would leave a tail in the vector loop).
  const te::Tensor stored =
      blocked ? te::input_tensors(te::input_tensors(sums[0])[0])[0] : te::Tensor();
  if (!blocked || stored.ndim() != 5 || mean.shape()[1] % stored.shape().back() != 0)
    return default_for(group);
  const te::Tensor& sum = sums[0];
  const int64_t b = stored.shape().back();
  const int lanes = std::max(1, group.target.vector_bytes() / 4);
  te::Schedule s = inline_all_but(group, mean, sum);
  te::Stage so = s[mean];
  auto [co, ci] = so.split(mean.axis(1), b);
  te::IterVar blocks = so.fuse(mean.axis(0), co);
  so.reorder({blocks, mean.axis(2), mean.axis(3), ci});
  vectorize_block(so, ci, b, lanes);
  if (group.num_threads > 1 && shape_numel(stored.shape()) >= kMinParallelGlobalInput &&
      shape_numel(mean.shape()) / b >= 2)
    so.parallel(blocks);
  // One block's sum: the positions outside, the block's channels inside, a vector accumulated.
  te::Stage ss = s[sum];
  ss.compute_at(so, mean.axis(3));
  ss.reorder(
      {sum.axis(0), sum.axis(2), sum.axis(3), sum.reduce_axis(0), sum.reduce_axis(1), sum.axis(1)});
  vectorize_block(ss, sum.axis(1), b, lanes);
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), {}};
}

}  // namespace collage::te_ops
