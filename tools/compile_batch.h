// `collage compile` with a batch range (--input-shape x=1..32x3x224x224): the range the driver
// compiles into one artifact with a plan per batch size (CompileOptions::batch), and its summary.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cli_common.h"
#include "collage/compiler.h"

namespace collage::cli {

// The batch range of the --input-shape ranges of `model` and --batch-sizes `sizes` ("1,8,32";
// empty: the default list); max 0 when no shape has a range. Every batched input shares one range.
absl::StatusOr<BatchRange> batch_range(const ModelArgs& model, const std::string& sizes);

// A line for the range, a table of the plans (batch, groups, backends, strategy) and how batches
// between plans run.
std::string batch_summary(const std::string& model, const CompileResult& compiled);

}  // namespace collage::cli
