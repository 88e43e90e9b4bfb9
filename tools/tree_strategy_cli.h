// The tree strategy in `collage compile`: the summary printed for each choice the driver made.
#pragma once

#include <string>

#include "collage/compiler.h"

namespace collage::cli {

// "tree strategy [of node 'NAME'] at batch N (measured): ..." with one line per candidate, for the
// summary.
std::string tree_strategy_summary(const TreeStrategyReport& r);

}  // namespace collage::cli
