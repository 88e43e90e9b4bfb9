// The tree strategy in `collage compile`: the library's measured choice on the command line's
// model and backends, and the summary printed for it.
#include "tree_strategy_cli.h"

#include "absl/strings/str_format.h"
#include "core/str_cat.h"
#include "placement_cli.h"

namespace collage::cli {

absl::StatusOr<CompileModel> load_compile_model(const Context& ctx, const ModelArgs& args,
                                                const TreeCompileOptions& options,
                                                const std::vector<std::string>& plugins) {
  ModelImportOptions import;
  import.onnx.input_shapes = args.shapes;
  auto format = parse_model_format(args.format);
  if (!format.ok()) return format.status();
  import.format = *format;
  BackendRegistry backends;
  if (absl::Status s = register_backends(backends, plugins); !s.ok()) return s;
  return import_compile_model(ctx, backends, args.model, import, options);
}

std::string tree_strategy_summary(const TreeStrategyReport& r) {
  std::string out =
      str_cat("tree strategy", r.node.empty() ? "" : str_cat(" of node '", r.node, "'"),
              " at batch ", r.batch, " (", r.mode, "): ", r.chosen);
  if (r.mode == "measured" && r.note.empty())
    out += absl::StrFormat(", the fastest placed candidate (%d kernels measured, %d costs reused)",
                           r.measured, r.cached);
  out += "\n";
  for (const TreeStrategyTiming& t : r.timings) {
    const std::string label = tree_strategy_label(t.candidate);
    if (t.status.ok())
      out += absl::StrFormat("  %-12s %12.4f ms%s\n", label, t.ms,
                             label == r.chosen ? "  chosen" : "");
    else
      out += absl::StrFormat("  %-12s skipped: %s\n", label, t.status.message());
  }
  if (!r.note.empty()) out += str_cat("  ", r.note, "\n");
  return out;
}

}  // namespace collage::cli
