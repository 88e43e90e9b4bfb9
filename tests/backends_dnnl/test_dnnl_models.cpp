// The small test models with every node the dnnl backend claims placed on dnnl (single:dnnl,
// the rest on the reference backend), run by the in-process executor and compared with the
// reference executor on the same optimised graph.
#include <catch2/catch.hpp>

#include "collage/backends/dnnl.h"
#include "collage/executor.h"
#include "collage/reference.h"
#include "common/cached_model.h"
#include "common/test_util.h"
#include "placement/baselines.h"

using namespace collage;

namespace {

void check_model(const std::string& name) {
  Context ctx;
  std::optional<testing::CachedModel> m = testing::load_cached_model(ctx, name);
  if (!m) return;
  const Graph* g = &m->graph;
  const std::vector<Tensor>& feed = m->inputs;

  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_dnnl_backend(backends).ok());
  auto placement = place_single(*g, backends, kDnnlBackend);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  size_t on_dnnl = 0, groups = 0;
  for (const PlacedGroup& pg : placement->groups) {
    if (pg.backend != kDnnlBackend) continue;
    on_dnnl += pg.nodes.count();
    ++groups;
  }
  auto compiled = compile_placement(ctx, backends, *g, *placement);
  INFO(compiled.status().ToString());
  REQUIRE(compiled.ok());
  auto outs = compiled->run(feed);
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  auto expected = run_reference(*g, feed);
  REQUIRE(expected.ok());
  REQUIRE(outs->size() == expected->size());
  double worst = 0;
  for (size_t i = 0; i < outs->size(); ++i) {
    INFO("output " << i << ": " << testing::describe_mismatch((*outs)[i], (*expected)[i]));
    const double err = testing::max_scaled_error((*outs)[i], (*expected)[i]);
    worst = std::max(worst, err);
    CHECK(err <= 1e-4);
  }
  WARN(name << ": " << on_dnnl << " of " << g->nodes().size() << " nodes on dnnl in " << groups
            << " groups; max scaled error " << worst);
  CHECK(on_dnnl > 0);
}

}  // namespace

TEST_CASE("dnnl models: single:dnnl placements match the reference", "[dnnl][models]") {
  for (const char* name : {"resnet50_small", "mobilenetv2_small", "resnext50_small",
                           "googlenet_small", "dcgan_small", "bert_small"}) {
    DYNAMIC_SECTION(name) {
      check_model(name);
    }
  }
}
