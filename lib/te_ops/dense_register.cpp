// Registers MatMul (batched included) and Gemm in the TE operator registry.
#include "te_ops/conv_dense_common.h"
#include "te_ops/dense.h"

namespace collage::te_ops {

void register_dense_ops(TeOpRegistry& r, const codegen::TargetSpec& target) {
  ScheduleFn schedule = [](const AnchorGroup& g) -> absl::StatusOr<ScheduledGroup> {
    absl::StatusOr<tune::ScheduleTemplate> t = dense::schedule_template(g);
    if (!t.ok()) return t.status();
    return t->apply(detail::knobs_for(g, *t));
  };
  r.add("MatMul", {dense::matmul_compute(target), schedule});
  r.add("Gemm", {dense::gemm_compute(target), schedule});
}

}  // namespace collage::te_ops
