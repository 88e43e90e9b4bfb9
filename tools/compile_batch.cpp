// run_batch_compile: the batch range of the command line turned into a BatchRange, each batch
// imported with the command's pipeline, the artifact written atomically and summarized.
#include "compile_batch.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "artifact/artifact.h"
#include "collage/passes.h"
#include "core/str_cat.h"
#include "io/file_io.h"
#include "placement/batch_variants.h"
#include "placement_cli.h"
#include "tree_strategy_cli.h"

namespace collage::cli {
namespace {

absl::StatusOr<BatchRange> batch_range(const ModelArgs& model, const std::string& sizes) {
  BatchRange range;
  for (const auto& [name, r] : model.ranges) {
    if (range.max && (r.min != range.min || r.max != range.max))
      return absl::InvalidArgumentError(
          str_cat("--input-shape ", name, ": batch range ", r.min, "..", r.max, ", another input "
                  "has ", range.min, "..", range.max, "; every batched input shares one range"));
    range.min = r.min;
    range.max = r.max;
    range.axes[name] = r.axis;
  }
  for (absl::string_view part : absl::StrSplit(sizes, ',', absl::SkipEmpty())) {
    int64_t b = 0;
    if (!absl::SimpleAtoi(part, &b))
      return absl::InvalidArgumentError(
          str_cat("--batch-sizes '", sizes, "': '", part, "' is not a number"));
    range.sizes.push_back(b);
  }
  return range;
}

}  // namespace

int run_batch_compile(const BatchCompileArgs& args) {
  const ModelArgs& model = *args.model;
  if (args.output.empty())
    return report_failure("compile", absl::InvalidArgumentError(
                                         "a batch range compiles into an artifact: give -o FILE"));
  auto range = batch_range(model, args.batch_sizes);
  if (!range.ok()) return report_failure("compile", range.status());
  Context ctx;
  BackendRegistry backends;
  if (absl::Status s = register_backends(backends, args.plugins); !s.ok())
    return report_failure("compile", s);
  const ImportAtBatch import = [&](int64_t batch) -> absl::StatusOr<Graph> {
    ModelArgs at = model;
    for (const auto& [name, r] : model.ranges) at.shapes[name][r.axis] = batch;
    auto m = load_compile_model(ctx, at, args.trees, args.plugins);
    if (!m.ok()) return m.status();
    if (!args.passes) return std::move(m->graph);
    return run_passes(ctx, m->graph);
  };
  ArtifactOptions artifact;
  artifact.waves.executor = wave_choice(args.placement.executor);
  auto result = compile_batch_variants(
      ctx, backends, import, *range, args.placement, artifact,
      [](int64_t batch, size_t i, size_t n) {
        std::fprintf(stderr, "batch %lld (%zu of %zu): placing\n", static_cast<long long>(batch),
                     i + 1, n);
      });
  if (!result.ok()) return report_failure("compile", result.status());
  auto writer = io::AtomicFileWriter::create(args.output);
  absl::Status s = writer.ok() ? (*writer)->write(result->artifact) : writer.status();
  if (s.ok()) s = (*writer)->commit();
  if (!s.ok()) return report_failure("compile", s);

  std::string out = absl::StrFormat("%s: batches %d..%d, %d plans\n", model.model, range->min,
                                    range->max, result->variants.size());
  TextTable t({true, true, false, false});
  t.add({"batch", "groups", "backends", "placement"});
  for (const BatchVariant& v : result->variants) {
    std::string used;
    for (const PlacedGroup& g : v.result.placement.groups)
      if (used.find(g.backend) == std::string::npos)
        used += str_cat(used.empty() ? "" : ",", g.backend);
    t.add({std::to_string(v.batch), std::to_string(v.result.placement.groups.size()), used,
           v.result.placement.strategy});
  }
  out += t.render(2);
  out += result->padded
             ? "  a batch without a plan runs on the next larger one, padded with zero rows (the "
               "graph keeps batch rows apart)\n"
             : str_cat("  ", result->note, "\n");
  out += absl::StrFormat("wrote %s: %s (constants %s, native code %s)\n", args.output,
                         human_bytes(static_cast<int64_t>(result->file_bytes)),
                         human_bytes(static_cast<int64_t>(result->constant_bytes)),
                         human_bytes(static_cast<int64_t>(result->native_code_bytes)));
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace collage::cli
