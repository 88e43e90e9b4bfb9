// DOT and HTML renderings of a placement report.
#include "explain_render.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "core/str_cat.h"

namespace collage::cli {
namespace {

// Colours of the known backends; others take the palette in order of appearance.
std::string colour_of(const std::string& backend, std::map<std::string, std::string>& assigned) {
  static constexpr const char* kPalette[] = {"#e15759", "#76b7b2", "#edc948",
                                             "#b07aa1", "#ff9da7", "#9c755f"};
  if (auto it = assigned.find(backend); it != assigned.end()) return it->second;
  std::string c;
  if (backend == "dnnl")
    c = "#4e79a7";
  else if (backend == "eigen")
    c = "#f28e2b";
  else if (backend == "native")
    c = "#59a14f";
  else if (backend == "reference")
    c = "#bab0ac";
  else
    c = kPalette[assigned.size() % std::size(kPalette)];
  return assigned[backend] = c;
}

std::string escape_xml(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_dot(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

std::string cost_text(double ms) {
  return ms >= 0 ? absl::StrFormat("%.4f ms", ms) : "cost unknown";
}

// Hover text of a node: itself, its group, the group's alternatives.
std::string hover(const Graph& g, const Explained& e, NodeId n) {
  const Node& node = g.node(n);
  std::string s = str_cat(node.name, " (", node.op_name(), ")");
  for (ValueId v : node.outputs) s += str_cat(" -> ", type_to_string(g.value(v).type));
  const int gi = e.group_of[n];
  const ExplainGroup& grp = e.groups[gi];
  s +=
      str_cat("\ngroup ", gi, " on ", grp.backend, " (", grp.origin, "), ", cost_text(grp.cost_ms));
  if (!grp.alternatives.empty()) s += "\nalternatives:";
  for (const std::string& a : grp.alternatives) s += "\n  " + a;
  return s;
}

std::vector<std::pair<NodeId, NodeId>> edges_of(const Graph& g) {
  std::vector<std::pair<NodeId, NodeId>> out;
  const auto& users = g.users();
  for (size_t n = 0; n < g.nodes().size(); ++n)
    for (ValueId v : g.node(static_cast<NodeId>(n)).outputs)
      for (NodeId u : users[v])
        if (std::find(out.begin(), out.end(), std::make_pair(static_cast<NodeId>(n), u)) ==
            out.end())
          out.push_back({static_cast<NodeId>(n), u});
  return out;
}

}  // namespace

bool report_used_passes(std::string_view report_json) {
  nlohmann::json j = nlohmann::json::parse(report_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("passes") || !j["passes"].is_boolean())
    return true;
  return j["passes"].get<bool>();
}

absl::StatusOr<Explained> explain_report(const Graph& g, std::string_view report_json,
                                         std::string title) {
  using Json = nlohmann::json;
  Json j = Json::parse(report_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("groups") || !j["groups"].is_array())
    return absl::InvalidArgumentError("the report is not a placement report (no \"groups\" list)");
  Explained e;
  e.title = std::move(title);
  e.strategy = j.value("strategy", std::string("?"));
  e.estimated_ms = j.value("estimated_ms", -1.0);
  if (j.contains("notes") && j["notes"].is_array())
    for (const Json& n : j["notes"])
      if (n.is_string()) e.notes.push_back(n.get<std::string>());
  if (j.contains("compared") && j["compared"].is_array())
    for (const Json& c : j["compared"])
      if (c.is_object())
        e.compared.push_back(
            c.value("ms", -1.0) >= 0
                ? absl::StrFormat("%s %.3f ms", c.value("strategy", ""), c.value("ms", -1.0))
                : str_cat(c.value("strategy", ""), " not measured"));
  std::map<std::string, NodeId> by_name;
  for (size_t n = 0; n < g.nodes().size(); ++n)
    by_name[g.node(static_cast<NodeId>(n)).name] = static_cast<NodeId>(n);
  e.group_of.assign(g.nodes().size(), -1);
  for (const Json& gj : j["groups"]) {
    if (!gj.is_object() || !gj.contains("nodes") || !gj["nodes"].is_array())
      return absl::InvalidArgumentError("the report has a group without a \"nodes\" list");
    ExplainGroup grp;
    grp.backend = gj.value("backend", std::string("?"));
    grp.origin = gj.value("origin", std::string());
    grp.cost_ms = gj.value("cost_ms", -1.0);
    if (gj.contains("alternatives") && gj["alternatives"].is_array())
      for (const Json& a : gj["alternatives"])
        if (a.is_object())
          grp.alternatives.push_back(str_cat(a.value("backend", ""), " (", a.value("origin", ""),
                                             "): ", cost_text(a.value("cost_ms", -1.0)),
                                             a.value("note", std::string()).empty() ? "" : ", ",
                                             a.value("note", std::string())));
    const int index = static_cast<int>(e.groups.size());
    for (const Json& name : gj["nodes"]) {
      auto it = name.is_string() ? by_name.find(name.get<std::string>()) : by_name.end();
      if (it == by_name.end())
        return absl::InvalidArgumentError(str_cat(
            "the report names node '", name.is_string() ? name.get<std::string>() : name.dump(),
            "', which the model does not have (was the report made from this model, with the same "
            "passes?)"));
      e.group_of[it->second] = index;
    }
    e.groups.push_back(std::move(grp));
  }
  for (size_t n = 0; n < g.nodes().size(); ++n)
    if (e.group_of[n] < 0)
      return absl::InvalidArgumentError(
          str_cat("node '", g.node(static_cast<NodeId>(n)).name, "' is in no group of the report"));
  return e;
}

std::string render_dot(const Graph& g, const Explained& e) {
  std::map<std::string, std::string> colours;
  std::string s =
      str_cat("digraph \"", escape_dot(e.title), "\" {\n  rankdir=TB;\n  label=\"",
              escape_dot(str_cat(e.title, " - ", e.strategy)),
              "\";\n  node [shape=box, style=\"rounded,filled\", fontname=Helvetica];\n");
  for (size_t gi = 0; gi < e.groups.size(); ++gi) {
    const ExplainGroup& grp = e.groups[gi];
    const std::string colour = colour_of(grp.backend, colours);
    s += str_cat("  subgraph cluster_", gi, " {\n    label=\"",
                 escape_dot(str_cat("#", gi, " ", grp.backend, " ", cost_text(grp.cost_ms))),
                 "\";\n    style=dashed; color=\"", colour, "\";\n");
    for (size_t n = 0; n < g.nodes().size(); ++n) {
      if (e.group_of[n] != static_cast<int>(gi)) continue;
      const Node& node = g.node(static_cast<NodeId>(n));
      s += str_cat("    n", n, " [label=\"", escape_dot(str_cat(node.name, "\n", node.op_name())),
                   "\", fillcolor=\"", colour, "\", tooltip=\"",
                   escape_dot(hover(g, e, static_cast<NodeId>(n))), "\"];\n");
    }
    s += "  }\n";
  }
  for (auto [a, b] : edges_of(g)) s += str_cat("  n", a, " -> n", b, ";\n");
  return s + "}\n";
}

std::string render_html(const Graph& g, const Explained& e) {
  constexpr int kW = 170, kH = 38, kGapX = 24, kGapY = 36, kMargin = 20;
  const size_t n = g.nodes().size();
  // Layers by longest path from the graph inputs; nodes in id order within a layer.
  std::vector<int> layer(n, 0);
  for (auto [a, b] : edges_of(g)) layer[b] = std::max(layer[b], layer[a] + 1);
  int layers = 0;
  for (int l : layer) layers = std::max(layers, l + 1);
  std::vector<int> slot(n, 0), count(static_cast<size_t>(layers), 0);
  for (size_t i = 0; i < n; ++i) slot[i] = count[static_cast<size_t>(layer[i])]++;
  const int widest = n ? *std::max_element(count.begin(), count.end()) : 1;
  const int width = 2 * kMargin + widest * (kW + kGapX);
  const int height = 2 * kMargin + layers * (kH + kGapY);
  auto x_of = [&](size_t i) {
    const int row = count[static_cast<size_t>(layer[i])];
    return kMargin + (widest - row) * (kW + kGapX) / 2 + slot[i] * (kW + kGapX);
  };
  auto y_of = [&](size_t i) { return kMargin + layer[i] * (kH + kGapY); };

  std::map<std::string, std::string> colours;
  std::map<std::string, std::pair<int, double>> per_backend;  // nodes, cost
  for (const ExplainGroup& grp : e.groups) colour_of(grp.backend, colours);
  for (size_t i = 0; i < n; ++i) ++per_backend[e.groups[e.group_of[i]].backend].first;
  for (const ExplainGroup& grp : e.groups)
    if (grp.cost_ms > 0) per_backend[grp.backend].second += grp.cost_ms;

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-family=\"Helvetica,"
      "Arial,sans-serif\" font-size=\"11\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" "
      "refX=\"8\" "
      "refY=\"4\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 "
      "z\" "
      "fill=\"#777\"/></marker></defs>\n",
      width, height);
  for (auto [a, b] : edges_of(g)) {
    const int x1 = x_of(a) + kW / 2, y1 = y_of(a) + kH, x2 = x_of(b) + kW / 2, y2 = y_of(b);
    const bool crossing = e.group_of[a] != e.group_of[b];
    svg += absl::StrFormat(
        "<path d=\"M%d,%d C%d,%d %d,%d %d,%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" "
        "marker-end=\"url(#arrow)\"/>\n",
        x1, y1, x1, y1 + kGapY / 2, x2, y2 - kGapY / 2, x2, y2, crossing ? "#777" : "#bbb",
        crossing ? "1.4" : "1");
  }
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.node(static_cast<NodeId>(i));
    const ExplainGroup& grp = e.groups[e.group_of[i]];
    std::string name = node.name.size() > 24 ? node.name.substr(0, 22) + "…" : node.name;
    svg += absl::StrFormat(
        "<g><title>%s</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" "
        "fill=\"%s\" stroke=\"#333\" stroke-width=\"0.6\"/><text x=\"%d\" y=\"%d\" "
        "text-anchor=\"middle\" font-weight=\"bold\">%s</text><text x=\"%d\" y=\"%d\" "
        "text-anchor=\"middle\">%s · #%d</text></g>\n",
        escape_xml(hover(g, e, static_cast<NodeId>(i))), x_of(i), y_of(i), kW, kH,
        colours[grp.backend], x_of(i) + kW / 2, y_of(i) + 15, escape_xml(node.op_name()),
        x_of(i) + kW / 2, y_of(i) + 29, escape_xml(name), e.group_of[i]);
  }
  svg += "</svg>\n";

  std::string html = str_cat(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", escape_xml(e.title),
      " placement</title>\n<style>body{font-family:Helvetica,Arial,sans-serif;margin:16px}"
      "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;"
      "text-align:left}.sw{display:inline-block;width:12px;height:12px;border:1px solid #333;"
      "margin-right:4px;vertical-align:middle}.legend span{margin-right:18px}</style></head>\n"
      "<body>\n<h2>",
      escape_xml(e.title), "</h2>\n<p>placement <b>", escape_xml(e.strategy), "</b>, ",
      e.groups.size(), " groups, ", n, " nodes",
      e.estimated_ms >= 0 ? absl::StrFormat(", estimate %.3f ms", e.estimated_ms) : "",
      ". Hover over a node for its group's cost and the alternatives considered.</p>\n"
      "<p class=\"legend\">");
  for (const auto& [backend, colour] : colours) {
    const auto& [nodes, cost] = per_backend[backend];
    html += absl::StrFormat(
        "<span><i class=\"sw\" style=\"background:%s\"></i>%s: %d nodes, "
        "%.3f ms</span>",
        colour, escape_xml(backend), nodes, cost);
  }
  html += "</p>\n";
  if (!e.compared.empty()) {
    html += "<p>end to end: ";
    for (size_t i = 0; i < e.compared.size(); ++i)
      html += (i ? " · " : "") + escape_xml(e.compared[i]);
    html += "</p>\n";
  }
  html += svg +
          "<h3>groups</h3>\n<table><tr><th>#</th><th>backend</th><th>origin</th>"
          "<th>cost</th><th>nodes</th><th>alternatives</th></tr>\n";
  for (size_t gi = 0; gi < e.groups.size(); ++gi) {
    const ExplainGroup& grp = e.groups[gi];
    std::string nodes, alts;
    for (size_t i = 0; i < n; ++i)
      if (e.group_of[i] == static_cast<int>(gi))
        nodes += (nodes.empty() ? "" : ", ") + escape_xml(g.node(static_cast<NodeId>(i)).name);
    for (const std::string& a : grp.alternatives)
      alts += (alts.empty() ? "" : "<br>") + escape_xml(a);
    html += absl::StrFormat(
        "<tr><td>%d</td><td><i class=\"sw\" style=\"background:%s\"></i>%s</td><td>%s</td>"
        "<td>%s</td><td>%s</td><td>%s</td></tr>\n",
        gi, colours[grp.backend], escape_xml(grp.backend), escape_xml(grp.origin),
        cost_text(grp.cost_ms), nodes, alts);
  }
  html += "</table>\n";
  if (!e.notes.empty()) {
    html += "<h3>notes</h3>\n<ul>\n";
    for (const std::string& note : e.notes) html += "<li>" + escape_xml(note) + "</li>\n";
    html += "</ul>\n";
  }
  return html + "</body></html>\n";
}

}  // namespace collage::cli
