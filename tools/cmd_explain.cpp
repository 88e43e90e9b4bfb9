// `collage explain`: renders a placement report over its model as Graphviz DOT and as a
// self-contained HTML page.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli_common.h"
#include "collage/passes.h"
#include "core/str_cat.h"
#include "explain_render.h"

namespace collage::cli {
namespace {

std::string with_extension(const std::string& path, const char* ext) {
  const size_t dot = path.rfind('.'), slash = path.rfind('/');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (has_ext ? path.substr(0, dot) : path) + ext;
}

int run_explain(std::span<const std::string> raw_args) {
  ArgParser parser("explain",
                   "Render the placement a `collage compile --report` wrote: Graphviz DOT (one\n"
                   "cluster per group) and a self-contained HTML page with the graph drawn, nodes\n"
                   "coloured by backend, group costs and rejected alternatives on hover.");
  ModelArgs model;
  model.declare(parser);
  std::string report, dot, html;
  parser.option("--report", "FILE", "the report written by `collage compile --report` (required)",
                &report);
  parser.option("--dot", "FILE", "where to write the DOT text (default: the report's name, .dot)",
                &dot);
  parser.option("--html", "FILE",
                "where to write the HTML page (default: the report's name, .html)", &html);
  parser.check([&]() -> std::optional<std::string> {
    if (report.empty()) return std::string("--report FILE is required");
    return std::nullopt;
  });
  if (std::optional<int> exit = parser.parse(raw_args)) return *exit;

  std::ifstream in(report);
  if (!in) return report_failure("explain", absl::NotFoundError(str_cat(report, ": cannot read")));
  std::stringstream text;
  text << in.rdbuf();
  Context ctx;
  auto imported = load_model(ctx, model);
  if (!imported.ok()) return report_failure("explain", imported.status());
  absl::StatusOr<Graph> g = std::move(imported);
  // The graph as compile placed it: with the passes unless the report says otherwise.
  if (report_used_passes(text.str())) {
    g = run_passes(ctx, *g);
    if (!g.ok()) return report_failure("explain", g.status());
  }
  auto e = explain_report(*g, text.str(), model.model);
  if (!e.ok())
    return report_failure(
        "explain", absl::Status(e.status().code(), str_cat(report, ": ", e.status().message())));
  if (dot.empty()) dot = with_extension(report, ".dot");
  if (html.empty()) html = with_extension(report, ".html");
  if (absl::Status s = write_text_file(dot, render_dot(*g, *e)); !s.ok())
    return report_failure("explain", s);
  if (absl::Status s = write_text_file(html, render_html(*g, *e)); !s.ok())
    return report_failure("explain", s);
  std::printf("%s: %zu groups over %zu nodes\nwrote %s\nwrote %s\n", model.model.c_str(),
              e->groups.size(), g->nodes().size(), dot.c_str(), html.c_str());
  return kExitOk;
}

}  // namespace

extern const Command kExplainCommand;
const Command kExplainCommand{"explain", "render a placement report as DOT and HTML", run_explain};

}  // namespace collage::cli
