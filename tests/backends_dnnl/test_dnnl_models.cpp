// The small test models with every node the dnnl backend claims placed on dnnl (single:dnnl,
// the rest on the reference backend), run by the in-process executor and compared with the
// reference executor on the same optimised graph.
#include <catch2/catch.hpp>
#include <filesystem>

#include "collage/backends/dnnl.h"
#include "collage/executor.h"
#include "collage/npz.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "placement/baselines.h"

using namespace collage;
namespace fs = std::filesystem;

namespace {

void check_model(const std::string& name) {
  const fs::path dir = testing::model_cache_dir();
  const fs::path model = dir / (name + ".onnx");
  if (!fs::exists(model)) {
    WARN("skipped: missing " << model.string() << " (run tests/models/build_models.sh)");
    return;
  }
  Context ctx;
  auto imported = import_onnx_file(ctx, model);
  REQUIRE(imported.ok());
  auto g = run_passes(ctx, *imported);
  REQUIRE(g.ok());
  auto inputs = read_npz(dir / (name + ".inputs.npz"));
  REQUIRE(inputs.ok());
  std::vector<Tensor> feed;
  for (ValueId in : g->inputs()) {
    auto it = std::find_if(inputs->begin(), inputs->end(),
                           [&](const auto& p) { return p.first == g->value(in).name; });
    REQUIRE(it != inputs->end());
    feed.push_back(it->second);
  }

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
