// Rendering a placement report over its graph: Graphviz DOT and a self-contained HTML page with
// an SVG drawing (nodes coloured by backend, group costs and alternatives on hover).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"

namespace collage::cli {

struct ExplainGroup {
  std::string backend, origin;
  double cost_ms = -1;
  std::vector<std::string> alternatives;  // one line each
};

// A report (`collage compile --report`) joined with the graph it was made from.
struct Explained {
  std::string title;  // model path
  std::string strategy;
  double estimated_ms = -1;
  std::vector<ExplainGroup> groups;
  std::vector<int> group_of;  // per node
  std::vector<std::string> notes;
  std::vector<std::string> compared;  // "single:dnnl 14.000 ms", ...
};

// Whether the report's graph went through the optimisation passes ("passes", default true).
bool report_used_passes(std::string_view report_json);

// Parses the report text and matches its groups' node names with `g`. Errors: malformed JSON, a
// node of the graph that no group holds, a node name the graph does not have.
absl::StatusOr<Explained> explain_report(const Graph& g, std::string_view report_json,
                                         std::string title);

std::string render_dot(const Graph& g, const Explained& e);
std::string render_html(const Graph& g, const Explained& e);

}  // namespace collage::cli
