// Building blocks shared by the tree-ensemble strategies: the error-keeping emitter, size checks,
// the per-node decision and the leaf sum.
#include "frontends/trees/tree_program.h"

#include <cstring>
#include <limits>

#include "collage/ops.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_util.h"

namespace collage::trees {

ValueId Emitter::op(std::string_view op, std::vector<ValueId> inputs,
                    std::shared_ptr<const OpAttrs> attrs) {
  if (!status_.ok()) return kNoValue;
  for (ValueId v : inputs)
    if (v == kNoValue) return kNoValue;
  auto r = b_.add(op, std::move(inputs), std::move(attrs), str_cat(prefix_, "/", op));
  if (!r.ok()) {
    fail(r.status());
    return kNoValue;
  }
  return *r;
}

ValueId Emitter::constant(std::string_view name, Tensor value) {
  if (!status_.ok()) return kNoValue;
  return b_.add_constant(str_cat(prefix_, "/", name), std::move(value));
}

ValueId Emitter::f32(std::string_view name, Shape shape, const std::vector<float>& values) {
  return constant(name, Tensor::from_f32(std::move(shape), values));
}

ValueId Emitter::i64(std::string_view name, Shape shape, const std::vector<int64_t>& values) {
  return constant(name, Tensor::from_i64(std::move(shape), values));
}

ValueId Emitter::boolean(std::string_view name, Shape shape, const std::vector<uint8_t>& values) {
  Tensor t(DType::boolean, std::move(shape));
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size());
  return constant(name, std::move(t));
}

ValueId Emitter::scalar_f32(float v) {
  return constant("scalar", Tensor::scalar_f32(v));
}
ValueId Emitter::scalar_i64(int64_t v) {
  return constant("scalar", Tensor::scalar_i64(v));
}

void Emitter::fail(absl::Status s) {
  if (status_.ok()) status_ = std::move(s);
}

int64_t checked_elements(std::initializer_list<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > kMaxConstantElements / d) return -1;
    n *= d;
  }
  return n;
}

absl::Status too_large(std::string_view strategy, std::string_view what,
                       std::initializer_list<int64_t> dims) {
  std::string shape;
  for (int64_t d : dims) shape += str_cat(shape.empty() ? "" : "x", d);
  return absl::ResourceExhaustedError(str_cat(strategy, ": ", what, " [", shape, "] would exceed ",
                                              kMaxConstantElements,
                                              " elements; use another tree strategy"));
}

ValueId add_decision(Emitter& e, ValueId v, const SplitValues& s) {
  ValueId left = e.op("Less", {v, s.threshold});
  if (s.inf_left != kNoValue)
    left = e.op("Where", {e.op("Equal", {v, e.scalar_f32(std::numeric_limits<float>::infinity())}),
                          s.inf_left, left});
  if (s.zero_band != kNoValue) {
    const ValueId in_band = e.op("Less", {e.op("Abs", {v}), s.zero_band});
    left = e.op("Where", {in_band, s.nan_left, left});
  }
  // v == v is false only for NaN.
  return e.op("Where", {e.op("Equal", {v, v}), left, s.nan_left});
}

ValueId add_leaf_sum(Emitter& e, ValueId leaves, const TreeEnsemble& m) {
  const auto trees = static_cast<int64_t>(m.trees.size());
  if (checked_elements({trees, m.num_outputs}) < 0) {
    e.fail(too_large("tree sum", "tree-to-output matrix", {trees, m.num_outputs}));
    return kNoValue;
  }
  std::vector<float> sum(static_cast<size_t>(trees * m.num_outputs), 0.f);
  for (int64_t t = 0; t < trees; ++t)
    sum[t * m.num_outputs + m.trees[t].output] = nearest_float(m.tree_scale);
  return e.op("MatMul", {leaves, e.f32("tree_to_output", {trees, m.num_outputs}, sum)});
}

}  // namespace collage::trees
