// Dynamic batch: a model with a batch dimension compiled into one artifact that runs any batch of
// a range (`collage compile --input-shape x=1..32x3x224x224`, CompileOptions::batch). Each batch
// size of a list (by default the range's ends and the powers of two between them) is imported,
// placed and built on its own; the runtime runs the plan of a batch, or pads a batch without one
// to the next larger plan when the graph provably keeps batch rows apart (passes/batch_rows.h).
// When it does not, every batch of the range gets a plan.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/backend.h"
#include "collage/compiler.h"
#include "collage/graph.h"
#include "collage/placement.h"

namespace collage {

struct ArtifactOptions;  // artifact/artifact.h

struct BatchCompileResult {
  std::string artifact;             // the bytes
  std::vector<BatchPlan> variants;  // ascending batch
  bool padded = false;              // batches between plans run padded
  std::string note;                 // why every batch got a plan, when it did
  std::vector<int32_t> input_axes, output_axes;
  ArtifactSummary summary;
};

// The model at batch B, imported and through the passes (the driver's pipeline).
using ImportAtBatch = std::function<absl::StatusOr<Graph>(int64_t batch)>;
// Told each batch as it is placed (may be empty).
using BatchProgress = std::function<void(int64_t batch, size_t index, size_t count)>;

// Compiles `range` into a dynamic-batch artifact: each batch placed with `placement` (its time
// budget shared among the batches) on `backends` and built with `artifact`. Errors name the batch
// and carry the import's, placement's or build's error; a batch list that skips batches of a
// graph that mixes rows is an error naming the node that mixes them.
absl::StatusOr<BatchCompileResult> compile_batch_variants(const Context& ctx,
                                                          const BackendRegistry& backends,
                                                          const ImportAtBatch& import,
                                                          const BatchRange& range,
                                                          PlacementOptions placement,
                                                          const ArtifactOptions& artifact,
                                                          const BatchProgress& progress = {});

}  // namespace collage
