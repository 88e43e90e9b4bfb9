// Registers Conv in the TE operator registry: its compute and its (tunable) schedule.
#include "te_ops/conv.h"
#include "te_ops/conv_dense_common.h"

namespace collage::te_ops {

void register_conv_ops(TeOpRegistry& r) {
  TeOpDef def;
  def.compute = conv::compute;
  def.schedule = [](const AnchorGroup& g) -> absl::StatusOr<ScheduledGroup> {
    absl::StatusOr<tune::ScheduleTemplate> t = conv::schedule_template(g);
    if (!t.ok()) return t.status();
    return t->apply(detail::knobs_for(g, *t));
  };
  r.add("Conv", std::move(def));
}

}  // namespace collage::te_ops
