// Loading test models of the model cache with their recorded inputs.
#include "common/cached_model.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "collage/npz.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "common/test_util.h"

namespace collage::testing {

std::optional<CachedModel> load_cached_model(const Context& ctx, const std::string& name) {
  const std::filesystem::path dir = model_cache_dir();
  const std::filesystem::path model = dir / (name + ".onnx");
  if (!std::filesystem::exists(model)) {
    WARN("skipped: missing " << model.string() << " (tests/models/build_models.sh makes it)");
    return std::nullopt;
  }
  auto imported = import_onnx_file(ctx, model);
  INFO(imported.status().ToString());
  REQUIRE(imported.ok());
  auto g = run_passes(ctx, *imported);
  INFO(g.status().ToString());
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
  return CachedModel{*std::move(g), std::move(feed)};
}

}  // namespace collage::testing
