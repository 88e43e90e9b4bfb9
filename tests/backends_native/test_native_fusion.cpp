// The native backend's candidates: single nodes for every supported node, anchor chains along
// single-use values as the fusion kinds allow, capped by RuleOptions::max_depth.
#include <catch2/catch.hpp>
#include <set>

#include "collage/backends/native.h"
#include "collage/ops/nn.h"
#include "collage/reference.h"
#include "collage/subgraph.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"

using namespace collage;
using collage::testing::max_scaled_error;
using collage::testing::add;
using collage::testing::random_f32;

namespace {

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
  CHECK(!sets.count({3, 4, 5}));      // Exp's result is also read by Mul, outside
  CHECK(sets.count({3, 4, 5, 6}));    // Mul reads Exp and Neg: the chain closes
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

TEST_CASE("native fusion: a conv takes SiLU, x * Sigmoid(x), and the kernel matches the reference",
          "[native]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {1, 24, 9, 10}});
  auto attrs = std::make_shared<ConvAttrs>();
  attrs->pads = {1, 1, 1, 1};
  ValueId c = *b.add("Conv", {x, b.add_constant("w", random_f32({32, 24, 3, 3}, 1)),
                              b.add_constant("b", random_f32({32}, 2))},
                     attrs);                  // 0
  ValueId s = add(b, "Sigmoid", {c});         // 1
  ValueId m = add(b, "Mul", {c, s});          // 2
  b.add_output(add(b, "Relu", {m}));          // 3
  b.add_output(m);
  auto g = b.finish();
  REQUIRE(g.ok());
  auto backend = make_native_backend();
  auto sets = candidate_sets(*backend, *g, 8);
  CHECK(!sets.count({0, 1}));  // the conv's result is also read by the Mul
  CHECK(sets.count({0, 1, 2}));
  CHECK(!sets.count({0, 1, 2, 3}));  // Mul's result is a graph output

  // The SiLU group alone, run by the native backend.
  auto group = extract_subgraph(ctx, *g, NodeSet::of(g->nodes().size(), {0, 1, 2}));
  REQUIRE(group.ok());
  Tensor in = random_f32({1, 24, 9, 10}, 3);
  auto expected = run_reference(group->graph, {in});
  REQUIRE(expected.ok());
  auto kernel = backend->build(group->graph, BuildOptions{.num_threads = 1});
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  Tensor out(DType::f32, {1, 32, 9, 10});
  void* args[] = {in.raw(), out.raw()};
  for (int32_t t = 0; t < (*kernel)->task_count(); ++t) REQUIRE((*kernel)->run_task(args, t).ok());
  CHECK(max_scaled_error(out, (*expected)[0]) <= 1e-5);
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
