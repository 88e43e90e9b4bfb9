// Building blocks of the tree-ensemble tensor programs, shared by the three strategies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/trees.h"

namespace collage::trees {

// Adds nodes to a GraphBuilder, keeping the first error: after a failure every call returns
// kNoValue and adds nothing, so a program reads as a straight list of operations and checks
// status() once at the end.
class Emitter {
 public:
  Emitter(GraphBuilder& b, std::string prefix) : b_(b), prefix_(std::move(prefix)) {}

  ValueId op(std::string_view op, std::vector<ValueId> inputs,
             std::shared_ptr<const OpAttrs> attrs = nullptr);
  ValueId constant(std::string_view name, Tensor value);
  ValueId f32(std::string_view name, Shape shape, const std::vector<float>& values);
  ValueId i64(std::string_view name, Shape shape, const std::vector<int64_t>& values);
  ValueId boolean(std::string_view name, Shape shape, const std::vector<uint8_t>& values);
  ValueId scalar_f32(float v);
  ValueId scalar_i64(int64_t v);
  // Records an error (the first one wins).
  void fail(absl::Status s);
  const absl::Status& status() const { return status_; }
  const TensorType& type(ValueId v) const { return b_.value(v).type; }

 private:
  GraphBuilder& b_;
  std::string prefix_;
  absl::Status status_;
};

// Elements a strategy may put in one constant before it is refused as too large.
constexpr int64_t kMaxConstantElements = int64_t{1} << 26;
// a * b, or -1 when it exceeds kMaxConstantElements (or overflows).
int64_t checked_elements(std::initializer_list<int64_t> dims);
// ResourceExhausted "<strategy>: <what> would have N elements (limit M); ...".
absl::Status too_large(std::string_view strategy, std::string_view what,
                       std::initializer_list<int64_t> dims);

// The split parameters (see FloatSplit) of the nodes being evaluated, each broadcastable to the
// feature values; zero_band and inf_left are kNoValue when the model needs none.
struct SplitValues {
  ValueId threshold = kNoValue, nan_left = kNoValue, zero_band = kNoValue, inf_left = kNoValue;
};
// Per-node decision of the traversal strategies: bool "goes left" for feature values `v`.
ValueId add_decision(Emitter& e, ValueId v, const SplitValues& s);

// Sums per-tree leaf values `leaves` (f32 [batch, trees]) into the model's outputs, scaled by
// tree_scale: f32 [batch, num_outputs].
ValueId add_leaf_sum(Emitter& e, ValueId leaves, const TreeEnsemble& m);

// The three strategies: margins without base_score, f32 [batch, num_outputs]. `x` is the f32
// [batch, num_features] input after the zero_threshold rule. Errors: too-large tensors.
absl::StatusOr<ValueId> add_gemm_program(GraphBuilder& b, ValueId x, const TreeEnsemble& m);
absl::StatusOr<ValueId> add_tree_traversal_program(GraphBuilder& b, ValueId x,
                                                   const TreeEnsemble& m);
absl::StatusOr<ValueId> add_perfect_tree_traversal_program(GraphBuilder& b, ValueId x,
                                                           const TreeEnsemble& m);

// The fused strategy: one TreeEnsemble operator over the perfect-tree layout, which adds the
// leaves to `base` (one float32 margin per output) in tree order, as XGBoost does. Unimplemented
// for models with LightGBM's zero band, ResourceExhausted when the padded trees are too large.
absl::Status fused_strategy_supports(const TreeEnsemble& m);
absl::StatusOr<ValueId> add_fused_program(GraphBuilder& b, ValueId x, const TreeEnsemble& m,
                                          const std::vector<float>& base);

}  // namespace collage::trees
