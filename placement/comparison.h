// Two-level's comparison deciding the placement: a single-backend baseline the comparison measured
// faster than the search's choice replaces it.
#pragma once

#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/placement.h"
#include "placement/baselines.h"

namespace collage {

// When a "single:NAME" row of `result.compared` (the chosen placement first, as the comparison
// measured it) is faster than the first, that baseline, placed with `options`, becomes
// `result.placement` (strategy and notes kept, its figure the estimate, `chosen_by` its name).
// The comparison's rounds are fresh measurements of both, alternated; the search's figure for
// its choice is the lowest of several noisy ones, so it favours the luckiest (ResNet-50 on the
// AVX2 host: the search chose its op-level mix, which then ran 68.97 ms against single:native's
// 65.36 in the same rounds). The rows become the new choice's (the first row's strategy, with the
// baseline's figure), the search's own ("graph-level search"), then the baselines, the adopted
// one noted "the chosen placement". Rows kept as measured decide the same way again.
void adopt_faster_baseline(OptimizeResult& result, const Graph& g, const BackendRegistry& backends,
                           const BaselineOptions& options);

}  // namespace collage
