// SVMPairwiseCoupling: an ai.onnx.ml SVMClassifier's class probabilities from its pairwise ones
// (libsvm's coupling, runtime/algorithms/pairwise_coupling.h, which the dynamic runtime module
// runs too).
#include "collage/ops/ml.h"
#include "core/str_cat.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets_ml.h"
#include "pairwise_coupling.h"

namespace collage::ops {
namespace {

// Classes beyond this are refused (ONNX Runtime's SVMClassifier stops at 65535).
constexpr int64_t kMaxClasses = 65535;

absl::Status infer_pairwise_coupling(InferContext& ctx) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, type_bit(DType::f32)); !s.ok()) return s;
  const int64_t k = ctx.attrs<PairwiseCouplingAttrs>().classes;
  if (k < 2 || k > kMaxClasses)
    return ctx.error(str_cat("classes is ", k, ", expected 2 to ", kMaxClasses));
  const TensorType& r = ctx.input(0);
  const int64_t pairs = k * (k - 1) / 2;
  if (r.shape.size() != 2 || (r.shape[1] >= 0 && r.shape[1] != pairs))
    return ctx.error(str_cat("input is ", type_to_string(r), ", expected f32[batch x ", pairs,
                             "] (one probability per pair of ", k, " classes)"));
  ctx.set_output(0, {DType::f32, {r.shape[0], k}});
  return absl::OkStatus();
}

absl::Status run_pairwise_coupling(const KernelArgs& args) {
  const int64_t k = args.get<PairwiseCouplingAttrs>().classes;
  const Tensor& r = args.inputs[0];
  Tensor& p = args.outputs[0];
  const int64_t rows = r.shape()[0], pairs = r.shape()[1];
  std::vector<float> q, qp;
  for (int64_t i = 0; i < rows; ++i)
    algorithms::pairwise_coupling(k, r.data<float>() + i * pairs, p.data<float>() + i * k, q, qp);
  return absl::OkStatus();
}

}  // namespace

void register_pairwise_coupling_op(OpRegistry& r) {
  add_builtin_op(r, make_op<PairwiseCouplingAttrs>("SVMPairwiseCoupling", FusionKind::opaque, 1,
                                                   1, infer_pairwise_coupling,
                                                   run_pairwise_coupling));
}

}  // namespace collage::ops
