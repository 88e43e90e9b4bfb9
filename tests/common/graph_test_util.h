// Building small graphs tersely in tests: each step fails the test on an error.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collage/graph.h"

namespace collage::testing {

// Adds a single-output node and fails the test on an error.
ValueId add(GraphBuilder& b, std::string_view op, std::vector<ValueId> inputs,
            std::shared_ptr<const OpAttrs> attrs = nullptr, std::string name = "");
// Finishes the graph and fails the test on an error.
Graph finish(GraphBuilder& b);

}  // namespace collage::testing
