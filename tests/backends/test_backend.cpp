// Backend candidates (pattern matches passing checks, rule outputs, convexity, deduplication)
// and the backend registry.
#include <catch2/catch.hpp>

#include "collage/backend.h"
#include "collage/executor.h"

using namespace collage;

namespace {

// A backend with no kernels of its own: it builds through the reference backend.
class FakeBackend : public Backend {
 public:
  explicit FakeBackend(std::string name) : Backend(std::move(name), DeviceKind::cpu, "test") {}
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    return make_reference_backend()->build(group, options);
  }
};

// x -> a=Relu(x) -> b=Sigmoid(a) -> c=Add(a, b) -> d=Tanh(c); e=Exp(x) -> out(d, e)
Graph diamond(const Context& ctx) {
  GraphBuilder b(ctx, "diamond");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId a = *b.add("Relu", {x}, nullptr, "a");
  ValueId s = *b.add("Sigmoid", {a}, nullptr, "b");
  ValueId c = *b.add("Add", {a, s}, nullptr, "c");
  ValueId d = *b.add("Tanh", {c}, nullptr, "d");
  ValueId e = *b.add("Exp", {x}, nullptr, "e");
  b.add_output(d);
  b.add_output(e);
  return *b.finish();
}

std::vector<std::vector<NodeId>> node_lists(const std::vector<Candidate>& cs) {
  std::vector<std::vector<NodeId>> out;
  for (const Candidate& c : cs) out.push_back(c.nodes.to_vector());
  return out;
}

}  // namespace

TEST_CASE("candidates: pattern matches that pass their checks", "[backend]") {
  Context ctx;
  Graph g = diamond(ctx);
  GraphReachability reach(g);
  FakeBackend be("fake");
  be.add_pattern("unary", is_op("Relu", "Sigmoid", "Tanh", "Exp")(wildcard()),
                 [](const Graph& g, const PatternMatch& m) {
                   return g.node(m.root).op_name() == "Exp" ? absl::InvalidArgumentError("no Exp")
                                                            : absl::OkStatus();
                 });
  be.add_pattern("add_tanh", is_op("Tanh")(is_op("Add")(wildcard(), wildcard())));
  // Relu -> Sigmoid is not a match: the Relu output is also read by the Add.
  be.add_pattern("relu_sigmoid", is_op("Sigmoid")(is_op("Relu")(wildcard())));
  auto cs = be.candidates(g, reach);
  CHECK(node_lists(cs) == std::vector<std::vector<NodeId>>{{0}, {1}, {3}, {2, 3}});
  CHECK(cs[0].origin == "unary");
  CHECK(cs[3].origin == "add_tanh");
  CHECK(cs[0].backend == &be);
}

TEST_CASE("candidates: rule outputs are filtered for convexity and deduplicated", "[backend]") {
  Context ctx;
  Graph g = diamond(ctx);
  GraphReachability reach(g);
  FakeBackend be("fake");
  be.add_pattern("sigmoid", is_op("Sigmoid")(wildcard()));
  int calls = 0;
  be.add_pattern_rule("sets",
                      [&](const Graph& g, const GraphReachability&, const RuleOptions& options) {
                        ++calls;
                        CHECK(options.max_depth == 3);
                        size_t n = g.nodes().size();
                        return std::vector<NodeSet>{
                            NodeSet::of(n, {0, 2}),     // a -> b -> c leaves through b: not convex
                            NodeSet::of(n, {1}),        // duplicate of the pattern's match: dropped
                            NodeSet::of(n, {0, 1, 2}),  // convex
                            NodeSet(n),                 // empty: dropped
                            NodeSet::of(n, {0, 1, 2}),  // duplicate
                            NodeSet::of(n, {3, 4}),     // unconnected nodes are convex
                        };
                      });
  RuleOptions options;
  options.max_depth = 3;
  auto cs = be.candidates(g, reach, options);
  CHECK(calls == 1);
  CHECK(node_lists(cs) == std::vector<std::vector<NodeId>>{{1}, {0, 1, 2}, {3, 4}});
  CHECK(cs[0].origin == "sigmoid");
  CHECK(cs[1].origin == "sets");
  CHECK(node_lists(be.candidates(g, reach, options)) == node_lists(cs));  // deterministic
}

TEST_CASE("the reference backend offers every node on its own", "[backend]") {
  Context ctx;
  Graph g = diamond(ctx);
  GraphReachability reach(g);
  auto ref = make_reference_backend();
  CHECK(ref->name() == "reference");
  CHECK(node_lists(ref->candidates(g, reach)) ==
        std::vector<std::vector<NodeId>>{{0}, {1}, {2}, {3}, {4}});
}

TEST_CASE("backend registry keeps registration order and unique names", "[backend]") {
  BackendRegistry r;
  REQUIRE(r.add(std::make_unique<FakeBackend>("b")).ok());
  REQUIRE(r.add(std::make_unique<FakeBackend>("a")).ok());
  absl::Status dup = r.add(std::make_unique<FakeBackend>("b"));
  CHECK(dup.code() == absl::StatusCode::kAlreadyExists);
  CHECK_THAT(std::string(dup.message()), Catch::Contains("backend 'b' is already registered"));
  CHECK(r.add(nullptr).code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(r.all().size() == 2);
  CHECK(r.all()[0]->name() == "b");
  CHECK(r.all()[1]->name() == "a");
  CHECK(r.find("a") == r.all()[1]);
  CHECK(r.find("c") == nullptr);
  CHECK(device_kind_name(DeviceKind::cpu) == "cpu");
  CHECK(device_kind_name(DeviceKind::cuda) == "cuda");
}
