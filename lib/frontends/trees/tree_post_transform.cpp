// SOFTMAX_ZERO and PROBIT post transforms of the tree-ensemble converters as graph nodes.
#include "frontends/trees/tree_post_transform.h"

#include "collage/ops.h"

namespace collage::trees {
namespace {

std::shared_ptr<const OpAttrs> row_reduction() {
  return make_attrs<ReduceAttrs>([](auto& a) {
    a.axes = {1};
    a.keepdims = 1;
  });
}

}  // namespace

ValueId add_softmax_zero(Emitter& e, ValueId y) {
  const ValueId shifted = e.op("Sub", {y, e.op("ReduceMax", {y}, row_reduction())});
  const ValueId nonzero = e.op("Greater", {e.op("Abs", {y}), e.scalar_f32(1e-7f)});
  const ValueId num = e.op("Where", {nonzero, e.op("Exp", {shifted}), e.scalar_f32(0.f)});
  return e.op("Div", {num, e.op("ReduceSum", {num}, row_reduction())});
}

ValueId add_probit(Emitter& e, ValueId y) {
  // erfinv(t) = sign(t) * sqrt(sqrt(v^2 - l / a) - v), l = log(1 - t^2), v = 2 / (pi a) + l / 2,
  // with the constants rounded to float as ONNX Runtime writes them.
  constexpr float kA = 0.147f;
  const ValueId t = e.op("Sub", {e.op("Mul", {y, e.scalar_f32(2.f)}), e.scalar_f32(1.f)});
  const ValueId one = e.scalar_f32(1.f);
  const ValueId l =
      e.op("Log", {e.op("Mul", {e.op("Sub", {one, t}), e.op("Add", {one, t})})});
  const ValueId v = e.op("Add", {e.scalar_f32(2 / (3.14159f * kA)),
                                 e.op("Mul", {e.scalar_f32(0.5f), l})});
  const ValueId v2 = e.op("Mul", {e.scalar_f32(1 / kA), l});
  // sqrt(v^2 - l / a) - v cancels when v > 0 (y near 0.5): there it is written
  // (-l / a) / (sqrt(v^2 - l / a) + v), the same value without the cancellation.
  const ValueId root = e.op("Sqrt", {e.op("Sub", {e.op("Mul", {v, v}), v2})});
  const ValueId inner = e.op("Where", {e.op("Less", {v, e.scalar_f32(0.f)}), e.op("Sub", {root, v}),
                                       e.op("Div", {e.op("Neg", {v2}), e.op("Add", {root, v})})});
  const ValueId magnitude = e.op("Sqrt", {inner});
  const ValueId sign =
      e.op("Where", {e.op("Less", {t, e.scalar_f32(0.f)}), e.scalar_f32(-1.f), one});
  return e.op("Mul", {e.scalar_f32(1.41421356f), e.op("Mul", {sign, magnitude})});
}

ValueId add_ml_post_transform(Emitter& e, const std::string& post, ValueId y) {
  if (post == "LOGISTIC") return e.op("Sigmoid", {y});
  if (post == "SOFTMAX")
    return e.op("Softmax", {y}, make_attrs<SoftmaxAttrs>([](auto& a) { a.axis = -1; }));
  if (post == "SOFTMAX_ZERO") return add_softmax_zero(e, y);
  if (post == "PROBIT") return add_probit(e, y);
  return y;
}

bool is_ml_post_transform(const std::string& post) {
  return post == "NONE" || post == "LOGISTIC" || post == "SOFTMAX" || post == "SOFTMAX_ZERO" ||
         post == "PROBIT";
}

}  // namespace collage::trees
