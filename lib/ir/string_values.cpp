// The refusal of string values by compiled models (string_values.h).
#include "ir/string_values.h"

#include "core/str_cat.h"

namespace collage {

absl::Status refuse_string_values(const Graph& graph) {
  for (const Value& v : graph.values())
    if (v.type.dtype == DType::str)
      return absl::UnimplementedError(str_cat(
          "tensor '", v.name, "' is a string tensor (", type_to_string(v.type),
          "): compiled models (artifacts, the C ABI, placements run in process) do not hold "
          "strings; the string operators run in the reference executor (collage run "
          "--placement reference)"));
  return absl::OkStatus();
}

}  // namespace collage
