// The operator version table and its lookup.
#include "frontends/onnx/onnx_op_history.h"

#include <algorithm>
#include <span>

#include "core/str_cat.h"

namespace collage::onnx_import {
namespace {

struct OpHistory {
  std::string_view name;
  int versions[12];  // ascending, then zeros
  int removed_at;    // 0: never
};

#include "frontends/onnx/onnx_op_history.inc"

std::span<const OpHistory> table_of(std::string_view domain) {
  if (domain == "ai.onnx.ml") return kMlOpHistory;
  return kOpHistory;
}

}  // namespace

int newest_known_opset(std::string_view domain) {
  return domain == "ai.onnx.ml" ? kNewestKnownMlOpset : kNewestKnownOpset;
}

absl::StatusOr<int> op_version(std::string_view domain, std::string_view op, int opset) {
  const auto table = table_of(domain);
  const auto it = std::lower_bound(table.begin(), table.end(), op,
                                   [](const OpHistory& h, std::string_view n) { return h.name < n; });
  const std::string shown = domain.empty() ? std::string(op) : str_cat(domain, ".", op);
  if (it == table.end() || it->name != op)
    return absl::NotFoundError(
        str_cat("ONNX has no operator '", shown, "' (up to opset ", newest_known_opset(domain), ")"));
  if (it->removed_at > 0 && opset >= it->removed_at)
    return absl::InvalidArgumentError(
        str_cat("ONNX removed '", shown, "' at opset ", it->removed_at));
  int version = 0;
  for (int v : it->versions)
    if (v > 0 && v <= opset) version = v;
  if (version == 0)
    return absl::InvalidArgumentError(
        str_cat("the default domain has it from opset ", it->versions[0]));
  return version;
}

}  // namespace collage::onnx_import
