// Test models of the model cache (tests/models/build_models.sh): imported, optimised, with their
// recorded inputs, for the tests that run whole models on one backend.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collage/context.h"
#include "collage/graph.h"
#include "collage/tensor.h"

namespace collage::testing {

struct CachedModel {
  Graph graph;                 // after the optimisation passes
  std::vector<Tensor> inputs;  // NAME.inputs.npz, in graph-input order
};

// NAME.onnx of model_cache_dir() with its inputs; nullopt, after a WARN naming the missing file,
// when the cache lacks it. A failed import, pass or input read fails the test (REQUIRE).
std::optional<CachedModel> load_cached_model(const Context& ctx, const std::string& name);

}  // namespace collage::testing
