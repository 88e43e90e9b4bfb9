// The whole-model check of the backends' test suites (single_backend_model.h).
#include "common/single_backend_model.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "collage/executor.h"
#include "collage/reference.h"
#include "common/cached_model.h"
#include "common/test_util.h"
#include "placement/baselines.h"

namespace collage::testing {

std::optional<BackendShare> check_single_backend_model(
    const std::string& name, std::string_view backend,
    absl::Status (*register_backend)(BackendRegistry&), double tolerance) {
  Context ctx;
  std::optional<CachedModel> m = load_cached_model(ctx, name);
  if (!m) return std::nullopt;
  const Graph& g = m->graph;

  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_backend(backends).ok());
  auto placement = place_single(g, backends, backend);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  BackendShare share{0, g.nodes().size()};
  size_t groups = 0;
  for (const PlacedGroup& group : placement->groups)
    if (group.backend == backend) {
      share.on_backend += group.nodes.count();
      ++groups;
    }

  auto compiled = compile_placement(ctx, backends, g, *placement);
  INFO(compiled.status().ToString());
  REQUIRE(compiled.ok());
  auto outputs = compiled->run(m->inputs);
  INFO(outputs.status().ToString());
  REQUIRE(outputs.ok());
  auto expected = run_reference(g, m->inputs);
  REQUIRE(expected.ok());
  REQUIRE(outputs->size() == expected->size());
  double worst = 0;
  for (size_t i = 0; i < outputs->size(); ++i) {
    INFO("output " << g.value(g.outputs()[i]).name << ": "
                   << describe_mismatch((*outputs)[i], (*expected)[i]));
    const double err = max_scaled_error((*outputs)[i], (*expected)[i]);
    worst = std::max(worst, err);
    CHECK(err <= tolerance);
  }
  WARN(name << ": " << backend << " runs " << share.on_backend << " of " << share.total
            << " nodes in " << groups << " kernels; max scaled error " << worst);
  return share;
}

}  // namespace collage::testing
