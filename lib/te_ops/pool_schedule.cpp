// schedule_pool: MaxPool over values stored in channel blocks, a vector of channels per tap.
#include "te_ops/pool_schedule.h"

#include <algorithm>

#include "te_ops/default_schedule.h"
#include "te_ops/layout_views.h"

namespace collage::te_ops {
namespace {

// Below this many output elements a kernel runs as one task (as the default schedule).
constexpr int64_t kMinParallelElements = 4096;

// Whether `reduction` reads only kernel arguments through a blocked logical view (layout_views.h).
bool reads_blocked(const te::Tensor& reduction) {
  const std::vector<te::Tensor> in = te::input_tensors(reduction);
  return !in.empty() && std::all_of(in.begin(), in.end(), [](const te::Tensor& t) {
    return t->tag == kLayoutViewTag;
  });
}

}  // namespace

absl::StatusOr<ScheduledGroup> schedule_pool(const AnchorGroup& group) {
  const te::Tensor& pooled = group.anchor_output;
  const bool blocked = group.outputs.size() == 1 &&
                       stored_source(group.outputs[0]).same_as(pooled) && pooled.ndim() == 4 &&
                       is_reduction(pooled) && reads_blocked(pooled);
  if (!blocked)
    return ScheduledGroup{
        default_schedule(group.outputs, {group.target, group.num_threads, ScheduleLevel::full}),
        {}};
  const te::Tensor& out = group.outputs[0];  // [N, C/b, OH, OW, b]
  const int64_t b = out.shape().back();
  const int lanes = std::max(1, group.target.vector_bytes() / 4);
  te::Schedule s = te::create_schedule(group.outputs);
  for (const te::Tensor& t : s.stage_tensors())
    if (t.op_kind() == te::OpKind::compute && !t.same_as(out) && !t.same_as(pooled))
      s[t].compute_inline();
  te::Stage so = s[out];
  te::IterVar rows = so.fuse(so.fuse(out.axis(0), out.axis(1)), out.axis(2));
  te::IterVar ci = out.axis(4);
  if (b > lanes) {
    auto [cio, cii] = so.split(ci, lanes);
    so.unroll(cio);
    ci = cii;
  }
  so.vectorize(ci);
  int64_t numel = 1;
  for (int64_t d : out.shape()) numel *= d;
  if (group.num_threads > 1 && numel >= kMinParallelElements) so.parallel(rows);
  // The window's maximum of one output position: the taps outside, the block's channels inside.
  te::Stage sp = s[pooled];
  sp.compute_at(so, out.axis(3));
  std::vector<te::IterVar> order = {pooled.axis(0), pooled.axis(2), pooled.axis(3)};
  for (size_t r = 0; r < pooled->reduce_axis.size(); ++r)
    order.push_back(pooled.reduce_axis(static_cast<int>(r)));
  te::IterVar c = pooled.axis(1);
  order.push_back(c);
  sp.reorder(order);
  if (b > lanes) {
    auto [co, cin] = sp.split(c, lanes);
    sp.unroll(co);
    c = cin;
  }
  sp.vectorize(c);
  if (!s.status().ok()) return s.status();
  return ScheduledGroup{std::move(s), {}};
}

}  // namespace collage::te_ops
