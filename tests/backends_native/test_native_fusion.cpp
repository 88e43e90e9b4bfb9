// The native backend's candidates: single nodes for every supported node, anchor chains along
// single-use values as the fusion kinds allow, capped by RuleOptions::max_depth.
#include <catch2/catch.hpp>
#include <set>

#include "collage/backends/native.h"
#include "collage/ops/nn.h"

using namespace collage;

namespace {

ValueId add(GraphBuilder& b, const std::string& op, std::vector<ValueId> in) {
  auto v = b.add(op, std::move(in));
  REQUIRE(v.ok());
  return *v;
}

// The candidates as sorted lists of node ids.
std::set<std::vector<NodeId>> candidate_sets(const Backend& backend, const Graph& g, int depth) {
  GraphReachability reach(g);
  RuleOptions options;
  options.max_depth = depth;
  std::set<std::vector<NodeId>> out;
  for (const Candidate& c : backend.candidates(g, reach, options)) {
    CHECK(c.backend == &backend);
    out.insert(c.nodes.to_vector());
  }
  return out;
}

}  // namespace

TEST_CASE("native fusion: chains follow single-use values as fusion kinds allow", "[native]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {4, 16}});
  ValueId s = add(b, "Softmax", {x});                        // 0 opaque
  ValueId a = add(b, "Add", {s, x});                         // 1 broadcast
  ValueId r = add(b, "Relu", {a});                           // 2 elementwise
  ValueId t = add(b, "Transpose", {r});                      // 3 injective: not after Softmax
  ValueId e = add(b, "Exp", {t});                            // 4
  ValueId n = add(b, "Neg", {e});                            // 5: e is read twice below
  ValueId m = add(b, "Mul", {n, e});                         // 6
  b.add_output(m);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto backend = make_native_backend();
  auto sets = candidate_sets(*backend, *g, 8);
  for (NodeId k = 0; k < 7; ++k) CHECK(sets.count({k}));
  CHECK(sets.count({0, 1}));
  CHECK(sets.count({0, 1, 2}));
  CHECK(!sets.count({0, 1, 2, 3}));  // opaque anchors take elementwise/broadcast only
  CHECK(sets.count({1, 2, 3}));       // broadcast anchors take injective operators
  CHECK(sets.count({3, 4}));
  CHECK(!sets.count({3, 4, 5}));      // Exp's result has two readers
  CHECK(sets.count({5, 6}));

  auto capped = candidate_sets(*backend, *g, 2);
  for (const auto& c : capped) CHECK(c.size() <= 2);
  CHECK(capped.count({1, 2}));
  CHECK(!capped.count({1, 2, 3}));
}

TEST_CASE("native fusion: a chain after a reduction stops where a broadcast grows the result",
          "[native]") {
  // Squeeze-and-excitation: the pooled scale multiplies the feature map it came from.
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {1, 8, 5, 5}});
  ValueId p = add(b, "GlobalAveragePool", {x});  // 0: [1, 8, 1, 1]
  ValueId s = add(b, "Sigmoid", {p});            // 1
  ValueId m = add(b, "Mul", {x, s});             // 2: [1, 8, 5, 5]
  ValueId r = add(b, "Relu", {m});               // 3
  b.add_output(r);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto backend = make_native_backend();
  auto sets = candidate_sets(*backend, *g, 8);
  CHECK(sets.count({0, 1}));
  CHECK(!sets.count({0, 1, 2}));  // the pool would run once per tile of the product
  CHECK(sets.count({1, 2, 3}));   // an elementwise anchor may broadcast
  CHECK(sets.count({2, 3}));
}

TEST_CASE("native fusion: nodes the library cannot compute get no candidate", "[native]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::i32, {4}});
  ValueId p = add(b, "Pow", {x, x});  // integer bases are not supported
  ValueId r = add(b, "Relu", {p});
  b.add_output(r);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto backend = make_native_backend();
  auto sets = candidate_sets(*backend, *g, 8);
  const std::set<std::vector<NodeId>> only_relu = {{1}};
  CHECK(sets == only_relu);
}
