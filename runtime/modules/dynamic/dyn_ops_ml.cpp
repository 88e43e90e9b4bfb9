// SVMPairwiseCoupling in the dynamic module (list: [classes]): an SVMClassifier's class
// probabilities from its pairwise ones, by the algorithm the reference kernel uses
// (runtime/algorithms/pairwise_coupling.h).
#include "dyn_value.h"
#include "pairwise_coupling.h"

namespace collage::rt_dynamic {

bool run_ml_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  if (p.op != DynOp::svm_pairwise_coupling) return false;
  const Value& r = in[0];
  const int64_t k = p.value(0, 0);
  if (k < 2 || k > 65535) throw KernelError("classes is " + std::to_string(k));
  if (r.dtype != COLLAGE_DTYPE_F32 || r.shape.size() != 2 || r.shape[1] != k * (k - 1) / 2)
    throw KernelError("input is " + type_text(r.dtype, r.shape) + ", expected f32[batch x " +
                      std::to_string(k * (k - 1) / 2) + "]");
  const int64_t rows = r.shape[0];
  float* probabilities = out.make_as<float>(0, {rows, k});
  std::vector<float> q, qp;
  for (int64_t i = 0; i < rows; ++i)
    algorithms::pairwise_coupling(k, r.as<float>() + i * r.shape[1], probabilities + i * k, q,
                                  qp);
  return true;
}

}  // namespace collage::rt_dynamic
