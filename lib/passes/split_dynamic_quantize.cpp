// The DynamicQuantizeLinear split: range, scale and zero point, quantization.
#include "passes/split_dynamic_quantize.h"

#include "collage/ops/dynamic_quantize_parts.h"
#include "collage/ops/quantize.h"
#include "core/str_cat.h"

namespace collage::passes {
namespace {

// Below this many values one node, on one thread, is quicker than three kernels.
constexpr int64_t kMinValues = int64_t{1} << 16;
// The trailing values each chunk keeps partial results for (as in one node's range, which stay
// in the first-level cache), the fewest that vectorize, and the most chunks and partial results
// the scale's reduction reads.
constexpr int64_t kMaxTrailing = 4096;
constexpr int64_t kMinTrailing = 16;
constexpr int64_t kMaxChunks = 8;
constexpr int64_t kMaxPartials = 16384;

// The range's split of `shape`: axis (the first trailing axis) and chunks; nullopt when the
// shape does not split into at least two chunks with vector-long rows.
std::optional<DynamicQuantizeRangeAttrs> range_split(const Shape& shape) {
  int64_t trailing = 1;
  size_t axis = shape.size();
  while (axis > 1 && trailing * shape[axis - 1] <= kMaxTrailing) trailing *= shape[--axis];
  if (trailing < kMinTrailing) return std::nullopt;
  const int64_t extent = shape[axis - 1];
  for (int64_t chunks = std::min(kMaxChunks, kMaxPartials / trailing); chunks >= 2; --chunks)
    if (extent % chunks == 0) {
      DynamicQuantizeRangeAttrs a;
      a.axis = static_cast<int64_t>(axis);
      a.chunks = chunks;
      return a;
    }
  return std::nullopt;
}

MatchResult match(const Graph& g, NodeId root) {
  const Node& node = g.node(root);
  const TensorType& x = g.value(node.inputs[0]).type;
  if (x.dtype != DType::f32) return no_match(failure_at(node, "x is not f32"));
  if (has_dynamic_dims(x.shape)) return no_match(failure_at(node, "x's shape is not static"));
  if (shape_numel(x.shape) < kMinValues)
    return no_match(failure_at(node, str_cat("x has fewer than ", kMinValues, " values")));
  std::optional<DynamicQuantizeRangeAttrs> split = range_split(x.shape);
  if (!split) return no_match(failure_at(node, "x's axes do not split into chunks"));
  RewriteMatch m;
  m.nodes = {root};
  m.emit = [root, attrs = *split](GraphRebuilder& rb) -> absl::Status {
    const Node& old = rb.source().node(root);
    GraphBuilder& b = rb.builder();
    const ValueId x = rb.map(old.inputs[0]);
    auto range = b.add_node("DynamicQuantizeRange", {x},
                            std::make_shared<DynamicQuantizeRangeAttrs>(attrs),
                            str_cat(old.name, "/range"), 1);
    if (!range.ok()) return range.status();
    auto params = b.add_node("DynamicQuantizeParams", {(*range)[0]}, nullptr,
                             str_cat(old.name, "/params"), 2);
    if (!params.ok()) return params.status();
    auto y = b.add_node("QuantizeLinear", {x, (*params)[0], (*params)[1]},
                        std::make_shared<QuantizeAttrs>(), str_cat(old.name, "/quantize"), 1);
    if (!y.ok()) return y.status();
    const ValueId now[3] = {(*y)[0], (*params)[0], (*params)[1]};
    for (size_t i = 0; i < old.outputs.size() && i < 3; ++i) {
      if (old.outputs[i] == kNoValue) continue;
      b.set_value_name(now[i], rb.source().value(old.outputs[i]).name);
      rb.set(old.outputs[i], now[i]);
    }
    return absl::OkStatus();
  };
  return {std::move(m), ""};
}

}  // namespace

RewritePattern split_dynamic_quantize_pattern() {
  return {"split_dynamic_quantize", "DynamicQuantizeLinear", 1, match};
}

PassResult split_dynamic_quantize(const Context& ctx, const Graph& g,
                                  const RewriteOptions& options) {
  const RewritePattern patterns[] = {split_dynamic_quantize_pattern()};
  return apply_rewrites(ctx, g, patterns, options);
}

}  // namespace collage::passes
