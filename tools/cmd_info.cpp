// `collage info`: describes an ONNX model (inputs, outputs, operators, parameters, FLOPs).
#include <cstdio>

#include "absl/strings/str_format.h"
#include "cli_common.h"
#include "collage/graph_stats.h"

namespace collage::cli {
namespace {

// FLOPs in units of `scale` (1e9 for GFLOPs), three decimals.
std::string scaled(int64_t flops, double scale) {
  return absl::StrFormat("%.3f", static_cast<double>(flops) / scale);
}

std::string value_rows(const Graph& g, const std::vector<ValueId>& ids) {
  TextTable t({false, false, false});
  for (ValueId id : ids) {
    const Value& v = g.value(id);
    t.add({v.name, std::string(dtype_name(v.type.dtype)), shape_to_string(v.type.shape)});
  }
  return t.render(2);
}

int run_info(std::span<const std::string> args) {
  ArgParser parser("info",
                   "Describe an ONNX model as imported: its inputs and outputs, the operators it "
                   "uses,\nits parameter count and its floating-point operations (FLOPs).");
  ModelArgs model;
  model.declare(parser);
  parser.epilog(
      "FLOPs count a multiply-add as 2 (Conv, ConvTranspose, MatMul, Gemm), elementwise\n"
      "operators 1 per output element, pooling and reductions 1 per input element read;\n"
      "data movement (Reshape, Transpose, Gather, ...) counts 0.");
  if (std::optional<int> exit = parser.parse(args)) return *exit;

  Context ctx;
  auto g = load_model(ctx, model);
  if (!g.ok()) return report_failure("info", g.status());
  const GraphStats stats = graph_stats(*g);

  std::string out;
  out += absl::StrFormat("model       %s\n", model.model);
  out += absl::StrFormat("graph       %s\n", g->name());
  out += absl::StrFormat("inputs      %d\n", g->inputs().size());
  out += value_rows(*g, g->inputs());
  out += absl::StrFormat("outputs     %d\n", g->outputs().size());
  out += value_rows(*g, g->outputs());
  out += absl::StrFormat("nodes       %s\n", with_commas(stats.nodes));
  out += absl::StrFormat("parameters  %s (%s)\n", with_commas(stats.parameters),
                         human_bytes(stats.parameter_bytes));
  out += absl::StrFormat("FLOPs       %s GFLOPs (%s)\n", scaled(stats.flops, 1e9),
                         with_commas(stats.flops));
  out += "\n";
  // Small models read better in MFLOPs.
  const bool giga = stats.flops >= 1'000'000'000;
  TextTable ops({false, true, true, true});
  ops.add({"operator", "count", giga ? "GFLOPs" : "MFLOPs", "share"});
  for (const OpStats& o : stats.ops) {
    const double share =
        stats.flops ? 100.0 * static_cast<double>(o.flops) / static_cast<double>(stats.flops) : 0;
    ops.add({o.op, with_commas(o.count), scaled(o.flops, giga ? 1e9 : 1e6),
             absl::StrFormat("%.1f%%", share)});
  }
  out += ops.render(0);
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace

extern const Command kInfoCommand;
const Command kInfoCommand{
    "info", "describe a model: inputs, outputs, operator counts, parameters, FLOPs", run_info};

}  // namespace collage::cli
