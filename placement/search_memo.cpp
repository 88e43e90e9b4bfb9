// The graph-level search's outcome in the cost database: key and group encoding.
#include "placement/search_memo.h"

#include <charconv>
#include <cstdlib>

#include "absl/strings/str_format.h"

#include "collage/executor.h"
#include "collage/subgraph.h"
#include "core/str_cat.h"

namespace collage {
namespace {

// `text` cut at every `sep` (Debian's absl::StrSplit does not take std::string_view).
std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t end; (end = text.find(sep, start)) != std::string_view::npos; start = end + 1)
    parts.push_back(text.substr(start, end - start));
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

CostKey search_memo_key(const std::string& device, const Graph& g,
                        const PlacementOptions& options,
                        const std::vector<const Backend*>& backends) {
  BuildOptions build;
  build.channel_block = options.channel_block;
  std::string key =
      str_cat("two-level|", canonical_signature(g), "|seed=", options.seed,
              "|budget=", options.time_budget_s, "|depth=", options.max_depth,
              "|candidates=", options.max_candidates, "|fallback=", options.fallback,
              "|executor=", static_cast<int>(options.executor), "|population=",
              options.population, "|generations=", options.max_generations, "|channel_block=",
              channel_block(build));
  for (const Backend* b : backends) key += str_cat("|", b->name(), "@", b->version());
  return CostKey{device, "search:two-level", "1", stable_hash(key)};
}

std::string encode_groups(const Placement& p) {
  std::string out;
  for (const PlacedGroup& group : p.groups) {
    if (!out.empty()) out += ';';
    out += group.backend + ':';
    std::vector<NodeId> nodes = group.nodes.to_vector();
    for (size_t i = 0; i < nodes.size(); ++i) out += str_cat(i ? "," : "", nodes[i]);
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<NodeSet, std::string>>> decode_groups(std::string_view text,
                                                                          size_t num_nodes) {
  std::vector<std::pair<NodeSet, std::string>> groups;
  for (std::string_view part : split(text, ';')) {
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return absl::InvalidArgumentError(str_cat("group '", part, "' has no 'backend:' prefix"));
    NodeSet nodes(num_nodes);
    for (std::string_view id : split(part.substr(colon + 1), ',')) {
      NodeId n = -1;
      auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
      if (ec != std::errc() || end != id.data() + id.size() || n < 0 ||
          static_cast<size_t>(n) >= num_nodes)
        return absl::InvalidArgumentError(
            str_cat("group '", part, "': '", id, "' is not a node of a ", num_nodes,
                    "-node graph"));
      nodes.insert(n);
    }
    groups.emplace_back(std::move(nodes), std::string(part.substr(0, colon)));
  }
  return groups;
}

std::string encode_compared(const std::vector<MeasuredPlacement>& rows) {
  std::string out;
  for (const MeasuredPlacement& r : rows) {
    std::string note = r.note;
    for (char& c : note)
      if (c == '\t' || c == '\n') c = ' ';
    out += absl::StrFormat("%s\t%.17g\t%s\n", r.strategy, r.ms, note);
  }
  return out;
}

std::optional<std::vector<MeasuredPlacement>> decode_compared(std::string_view text) {
  std::vector<MeasuredPlacement> rows;
  for (std::string_view line : split(text, '\n')) {
    if (line.empty()) continue;
    const size_t tab1 = line.find('\t');
    const size_t tab2 = tab1 == line.npos ? line.npos : line.find('\t', tab1 + 1);
    if (tab2 == line.npos || tab1 == 0) return std::nullopt;
    const std::string ms_text(line.substr(tab1 + 1, tab2 - tab1 - 1));
    char* end = nullptr;
    const double ms = std::strtod(ms_text.c_str(), &end);
    if (ms_text.empty() || end != ms_text.c_str() + ms_text.size()) return std::nullopt;
    rows.push_back({std::string(line.substr(0, tab1)), ms, std::string(line.substr(tab2 + 1))});
  }
  if (rows.empty()) return std::nullopt;
  return rows;
}

}  // namespace collage
