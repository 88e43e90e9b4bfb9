// `collage compile` with a batch range (--input-shape x=1..32x3x224x224): one artifact holding a
// plan per batch size (placement/batch_variants.h), and its summary.
#pragma once

#include <string>
#include <vector>

#include "cli_common.h"
#include "collage/placement.h"
#include "placement/tree_strategy.h"

namespace collage::cli {

struct BatchCompileArgs {
  const ModelArgs* model = nullptr;  // with at least one range
  PlacementOptions placement;        // the reference fallback kept out
  std::vector<std::string> plugins;
  TreeCompileOptions trees;          // the tree strategy, as a plain compile uses it
  bool passes = true;
  std::string output;                // the artifact
  std::string batch_sizes;           // --batch-sizes: "1,8,32"; empty: the default list
};

// Compiles, writes the artifact and prints a line per batch and the artifact's figures. Returns
// the exit code (errors are reported on stderr).
int run_batch_compile(const BatchCompileArgs& args);

}  // namespace collage::cli
