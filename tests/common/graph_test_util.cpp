// Implementation of the graph-building test helpers.
#include "common/graph_test_util.h"

#include <catch2/catch.hpp>

namespace collage::testing {

ValueId add(GraphBuilder& b, std::string_view op, std::vector<ValueId> inputs,
            std::shared_ptr<const OpAttrs> attrs, std::string name) {
  auto v = b.add(op, std::move(inputs), std::move(attrs), std::move(name));
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  return *v;
}

Graph finish(GraphBuilder& b) {
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

}  // namespace collage::testing
