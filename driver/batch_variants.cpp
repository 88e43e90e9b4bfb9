// compile_batch_variants: every batch size imported, placed and built; padding proved or every
// batch of the range compiled; one artifact written with a plan per batch.
#include "driver/batch_variants.h"

#include "artifact/artifact.h"
#include "core/str_cat.h"
#include "passes/batch_rows.h"

namespace collage {
namespace {

// The batch axis of each output, read off two plans: the one axis whose size is the batch in
// both (-1 when the output is the same at every batch).
absl::StatusOr<std::vector<int32_t>> output_axes_of(const BatchPlan& a, const BatchPlan& b) {
  std::vector<int32_t> axes;
  for (size_t i = 0; i < a.graph.outputs().size(); ++i) {
    const Value& va = a.graph.value(a.graph.outputs()[i]);
    const Shape& sa = va.type.shape;
    const Shape& sb = b.graph.value(b.graph.outputs()[i]).type.shape;
    int32_t axis = -1;
    bool ok = sa.size() == sb.size();
    for (size_t d = 0; ok && d < sa.size(); ++d) {
      if (sa[d] == sb[d]) continue;
      ok = axis < 0 && sa[d] == a.batch && sb[d] == b.batch;
      axis = static_cast<int32_t>(d);
    }
    if (!ok)
      return absl::FailedPreconditionError(str_cat(
          "output '", va.name, "' is ", shape_to_string(sa), " at batch ", a.batch, " and ",
          shape_to_string(sb), " at batch ", b.batch, ": it does not follow the batch on one "
          "axis"));
    axes.push_back(axis);
  }
  return axes;
}

// A graph with a value whose shape only the run knows cannot run a smaller batch padded (the
// padding rows would count: NonZero, NonMaxSuppression, Unique over them), whatever its rows do:
// the error names the value and the node that makes it.
absl::Status data_dependent(const Graph& g) {
  for (const Node& n : g.nodes())
    for (ValueId out : n.outputs)
      if (g.value(out).type.is_dynamic())
        return absl::FailedPreconditionError(
            str_cat(n.op_name(), " '", n.name, "' gives '", g.value(out).name, "' a shape known "
                    "only at run time (", type_to_string(g.value(out).type), "), so a smaller "
                    "batch cannot be padded to a compiled one"));
  return absl::OkStatus();
}

// Refuses a model that computes from one row of a batch whatever its size (an exported `x[0]`)
// when no output follows the batch: every batch would give that row's results, so the model has
// no batch axis to range over.
absl::Status batch_kept(const Graph& g, const std::vector<int32_t>& input_axes,
                        const std::vector<int32_t>& output_axes) {
  for (int32_t a : output_axes)
    if (a >= 0) return absl::OkStatus();
  const Node* pick = find_batch_row_pick(g, std::vector<int>(input_axes.begin(),
                                                              input_axes.end()));
  if (!pick) return absl::OkStatus();
  std::string inputs;
  for (size_t i = 0; i < input_axes.size(); ++i)
    if (input_axes[i] >= 0)
      inputs += str_cat(inputs.empty() ? "" : ", ", "'", g.value(g.inputs()[i]).name, "'");
  return absl::FailedPreconditionError(str_cat(
      "batch range: ", pick->op_name(), " '", pick->name, "' keeps one row of the batch of input ",
      inputs, " and drops the others, and no output has a batch axis: the model computes from a "
      "single row whatever the batch, so it cannot take a batch range; compile it for its own "
      "batch"));
}

}  // namespace

std::vector<int64_t> default_batch_sizes(int64_t min, int64_t max) {
  std::vector<int64_t> sizes{min};
  for (int64_t p = 1; p < max; p *= 2)
    if (p > min) sizes.push_back(p);
  if (max > min) sizes.push_back(max);
  return sizes;
}

absl::StatusOr<BatchCompileResult> compile_batch_variants(const Context& ctx,
                                                          const BackendRegistry& backends,
                                                          const ImportAtBatch& import,
                                                          const BatchRange& range,
                                                          PlacementOptions placement,
                                                          const ArtifactOptions& artifact,
                                                          const BatchProgress& progress) {
  if (range.min < 1 || range.max <= range.min || range.axes.empty())
    return absl::InvalidArgumentError(
        str_cat("batch range ", range.min, "..", range.max, ": expected 1 <= min < max on the "
                "axis of at least one input"));
  const bool explicit_sizes = !range.sizes.empty();
  std::vector<int64_t> sizes =
      explicit_sizes ? range.sizes : default_batch_sizes(range.min, range.max);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < range.min || sizes[i] > range.max || (i && sizes[i] <= sizes[i - 1]) ||
        (i + 1 == sizes.size() && sizes[i] != range.max))
      return absl::InvalidArgumentError(
          str_cat("batch sizes: ", sizes[i], " (entry ", i, ") is out of order or outside ",
                  range.min, "..", range.max, "; the list ascends and ends with ", range.max));
  if (placement.time_budget_s > 0) placement.time_budget_s /= static_cast<double>(sizes.size());

  BatchCompileResult out;
  auto place = [&](int64_t batch) -> absl::StatusOr<BatchPlan> {
    auto in_batch = [&](const absl::Status& s) {
      return absl::Status(s.code(), str_cat("batch ", batch, ": ", s.message()));
    };
    auto g = import(batch);
    if (!g.ok()) return in_batch(g.status());
    auto placed = optimize_detailed(ctx, backends, *g, placement);
    if (!placed.ok()) return in_batch(placed.status());
    return BatchPlan{batch, std::move(*g), std::move(*placed)};
  };
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (progress) progress(sizes[i], i, sizes.size());
    auto v = place(sizes[i]);
    if (!v.ok()) return v.status();
    out.variants.push_back(std::move(*v));
  }
  const Graph& first = out.variants.front().graph;
  for (ValueId in : first.inputs()) {
    auto it = range.axes.find(first.value(in).name);
    out.input_axes.push_back(it == range.axes.end() ? -1 : it->second);
  }
  auto outputs = output_axes_of(out.variants[0], out.variants[1]);
  if (!outputs.ok()) return outputs.status();
  out.output_axes = *outputs;
  if (absl::Status s = batch_kept(out.variants.back().graph, out.input_axes, out.output_axes);
      !s.ok())
    return s;

  // Padding: every plan that serves batches below it must keep rows apart.
  out.padded = true;
  for (size_t i = 0; i < out.variants.size() && out.padded; ++i) {
    const int64_t below = i ? out.variants[i - 1].batch : range.min - 1;
    if (out.variants[i].batch == below + 1) continue;
    std::vector<int> axes(out.input_axes.begin(), out.input_axes.end());
    const absl::Status fixed = data_dependent(out.variants[i].graph);
    absl::StatusOr<std::vector<int>> traced =
        fixed.ok() ? trace_batch_rows(out.variants[i].graph, axes) : fixed;
    if (traced.ok()) {
      if (std::vector<int32_t>(traced->begin(), traced->end()) != out.output_axes)
        return absl::InternalError(str_cat("batch ", out.variants[i].batch,
                                           ": the traced output batch axes disagree with the "
                                           "outputs' shapes"));
      continue;
    }
    if (explicit_sizes)
      return absl::Status(traced.status().code(),
                          str_cat(traced.status().message(), "; list every batch of ",
                                  range.min, "..", range.max, " or leave the batch list out"));
    out.padded = false;
    out.note = str_cat("every batch has a plan of its own: ", traced.status().message());
  }
  if (!out.padded) {
    if (range.max - range.min + 1 > kMaxBatchPlans)
      return absl::FailedPreconditionError(
          str_cat(out.note, "; the range ", range.min, "..", range.max, " would need more than ",
                  kMaxBatchPlans, " plans"));
    std::vector<BatchPlan> all;
    size_t next = 0;
    for (int64_t b = range.min; b <= range.max; ++b) {
      if (next < out.variants.size() && out.variants[next].batch == b) {
        all.push_back(std::move(out.variants[next++]));
        continue;
      }
      if (progress) progress(b, static_cast<size_t>(b - range.min),
                             static_cast<size_t>(range.max - range.min + 1));
      auto v = place(b);
      if (!v.ok()) return v.status();
      all.push_back(std::move(*v));
    }
    out.variants = std::move(all);
  }

  std::vector<PlacedBatch> batches;
  for (const BatchPlan& v : out.variants)
    batches.push_back({v.batch, &v.graph, &v.optimized.placement});
  DynamicBatchInfo info{range.min, range.max, out.input_axes, out.output_axes, out.padded};
  auto bytes = compile_batch_artifact(ctx, backends, batches, info, artifact, &out.summary);
  if (!bytes.ok()) return bytes.status();
  out.artifact = std::move(*bytes);
  return out;
}

}  // namespace collage
