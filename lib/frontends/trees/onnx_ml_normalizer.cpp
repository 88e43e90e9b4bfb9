// ai.onnx.ml Normalizer: each row divided by its maximum, L1 or L2 norm in float32, a row whose
// norm is zero left as it is (ONNX Runtime's rule).
#include "collage/ops.h"
#include "frontends/trees/onnx_ml_models.h"

namespace collage::ml {

absl::Status convert_normalizer(const NodeAttrs& a, GraphBuilder& b, trees::Emitter& e, ValueId x,
                                std::vector<ValueId>& outputs) {
  const Shape shape = b.value(x).type.shape;
  int64_t batch = 0, features = 0;
  auto in = features_as_f32(e, a, b, x, &batch, &features);
  if (!in.ok()) return in.status();
  const std::string norm = a.string("norm", "MAX");
  const auto rows = make_attrs<ReduceAttrs>([](auto& r) {
    r.axes = {1};
    r.keepdims = 1;
  });
  ValueId d = kNoValue;
  if (norm == "MAX") {
    d = e.op("ReduceMax", {*in}, rows);
  } else if (norm == "L1") {
    d = e.op("ReduceSum", {e.op("Abs", {*in})}, rows);
  } else if (norm == "L2") {
    d = e.op("Sqrt", {e.op("ReduceSum", {e.op("Mul", {*in, *in})}, rows)});
  } else {
    return a.error(str_cat("norm is '", norm, "'; it must be MAX, L1 or L2"));
  }
  const ValueId one = e.scalar_f32(1.f);
  const ValueId divisor = e.op("Where", {e.op("Equal", {d, e.scalar_f32(0.f)}), one, d});
  ValueId y = e.op("Div", {*in, divisor});
  if (shape.size() == 1)
    y = e.op("Reshape", {y}, make_attrs<ReshapeAttrs>([&](auto& r) { r.shape = shape; }));
  outputs = {y};
  return absl::OkStatus();
}

}  // namespace collage::ml
