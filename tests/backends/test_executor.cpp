// The in-process executor: placed groups compute what run_reference computes, buffers are reused,
// kernel tasks run on the pool, and bad placements or inputs give errors naming the culprit.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "collage/executor.h"
#include "collage/ops/elementwise.h"
#include "collage/reference.h"
#include "common/test_util.h"

using namespace collage;

namespace {

// Relu split into `tasks` chunks; counts the tasks it ran. Fails on purpose when asked to.
class ChunkedReluKernel : public Kernel {
 public:
  ChunkedReluKernel(int64_t n, int32_t tasks, std::atomic<int>* ran, bool fail)
      : n_(n), tasks_(tasks), ran_(ran), fail_(fail) {}
  int32_t task_count() const override { return tasks_; }
  absl::Status run_task(void* const* args, int32_t t) override {
    if (fail_ && t == 1) return absl::InternalError("chunk 1 failed");
    auto* x = static_cast<const float*>(args[0]);
    auto* y = static_cast<float*>(args[1]);
    for (int64_t i = n_ * t / tasks_; i < n_ * (t + 1) / tasks_; ++i) y[i] = x[i] > 0 ? x[i] : 0;
    ++*ran_;
    return absl::OkStatus();
  }
  const KernelRecord& record() const override { return record_; }

 private:
  int64_t n_;
  int32_t tasks_;
  std::atomic<int>* ran_;
  bool fail_;
  KernelRecord record_{"chunked", "relu", {}, {}};
};

class ChunkedReluBackend : public Backend {
 public:
  ChunkedReluBackend(std::atomic<int>* ran, bool fail = false)
      : Backend("chunked", DeviceKind::cpu, "1"), ran_(ran), fail_(fail) {
    add_pattern("relu", is_op("Relu")(wildcard()));
  }
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& g,
                                                const BuildOptions&) const override {
    if (g.nodes().size() != 1 || g.nodes()[0].op_name() != "Relu")
      return absl::InvalidArgumentError("only single Relu nodes");
    return std::make_unique<ChunkedReluKernel>(g.value(g.inputs()[0]).type.numel(), 8, ran_, fail_);
  }

 private:
  std::atomic<int>* ran_;
  bool fail_;
};

// x, y -> m=MatMul(x, w) -> a=Add(m, y) -> r=Relu(a) -> s=Sigmoid(r); t=Tanh(a);
// outputs: s, t, a (a is also read by later groups), x (an input), w (a constant)
Graph model(const Context& ctx) {
  GraphBuilder b(ctx, "model");
  ValueId x = b.add_input("x", {DType::f32, {3, 4}});
  ValueId y = b.add_input("y", {DType::f32, {3, 5}});
  ValueId w = b.add_constant("w", testing::random_f32({4, 5}, 7));
  ValueId m = *b.add("MatMul", {x, w}, nullptr, "m");
  ValueId a = *b.add("Add", {m, y}, nullptr, "a");
  ValueId r = *b.add("Relu", {a}, nullptr, "r");
  ValueId s = *b.add("Sigmoid", {r}, nullptr, "s");
  ValueId t = *b.add("Tanh", {a}, nullptr, "t");
  b.add_output(s);
  b.add_output(t);
  b.add_output(a);
  b.add_output(x);
  b.add_output(w);
  return *b.finish();
}

PlacedGroup group(const Graph& g, std::vector<NodeId> nodes, std::string backend = "reference") {
  PlacedGroup p;
  p.nodes = NodeSet::of(g.nodes().size(), nodes);
  p.backend = std::move(backend);
  return p;
}

std::vector<Tensor> model_inputs() {
  return {testing::random_f32({3, 4}, 1), testing::random_f32({3, 5}, 2)};
}

void check_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("output " << i);
    CHECK(got[i].identical(want[i]));
  }
}

}  // namespace

TEST_CASE("executor: placed groups compute what the reference executor computes", "[executor]") {
  Context ctx;
  Graph g = model(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  auto want = run_reference(g, model_inputs());
  REQUIRE(want.ok());

  SECTION("one group per node") {
    Placement p;
    for (NodeId n = 0; n < 5; ++n) p.groups.push_back(group(g, {n}));
    auto m = compile_placement(ctx, backends, g, p);
    REQUIRE(m.ok());
    CHECK(m->groups().size() == 5);
    auto got = m->run(model_inputs());
    REQUIRE(got.ok());
    check_same(*got, *want);
  }
  SECTION("multi-node groups with several outputs") {
    Placement p;
    p.groups = {group(g, {0, 1}), group(g, {2, 3}), group(g, {4})};
    auto m = compile_placement(ctx, backends, g, p);
    REQUIRE(m.ok());
    CHECK(m->groups()[0].nodes == std::vector<std::string>{"m", "a"});
    CHECK(m->groups()[0].kernel_module == "reference");
    auto got = m->run(model_inputs());
    REQUIRE(got.ok());
    check_same(*got, *want);
    // The model can run again, and outputs are fresh tensors each time.
    auto again = m->run(model_inputs());
    REQUIRE(again.ok());
    check_same(*again, *want);
    CHECK((*again)[0].raw() != (*got)[0].raw());
  }
}

TEST_CASE("executor: intermediate buffers are reused once their last reader ran", "[executor]") {
  Context ctx;
  GraphBuilder b(ctx, "chain");
  ValueId v = b.add_input("x", {DType::f32, {1000}});
  for (int i = 0; i < 6; ++i) v = *b.add(i % 2 ? "Relu" : "Neg", {v});
  b.add_output(v);
  Graph g = *b.finish();
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  Placement p;
  for (NodeId n = 0; n < 6; ++n) p.groups.push_back(group(g, {n}));
  auto m = compile_placement(ctx, backends, g, p);
  REQUIRE(m.ok());
  // Five intermediates of 4000 bytes; at most two are live at once.
  CHECK(m->unshared_bytes() == 5 * 4032);
  CHECK(m->arena_bytes() == 2 * 4032);
  Tensor x = testing::random_f32({1000}, 3);
  auto got = m->run({x});
  auto want = run_reference(g, {x});
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  check_same(*got, *want);
}

TEST_CASE("executor: the arena is planned as an artifact plans it, largest values first",
          "[executor]") {
  // Lifetimes (group order): r0 [1] 0-2, n1 [1000] 1-2, a2 [1000] 2-3, r3 [1] 3-4, a4 [2000] 4-5.
  // A slot per value chain, grown to its largest value, took 64 + 8000 + 4032 bytes: a4 grew one
  // of n1's and a2's slots while the other stayed. Placed largest first, a4 and n1 share offset
  // 0, a2 sits above n1, and the two small values above a2.
  Context ctx;
  GraphBuilder b(ctx, "sizes");
  ValueId x = b.add_input("x", {DType::f32, {1000}});
  ValueId y = b.add_input("y", {DType::f32, {2000}});
  auto sum = [&](ValueId v) {
    return *b.add("ReduceSum", {v}, make_attrs<ReduceAttrs>([](ReduceAttrs& a) { a.axes = {0}; }));
  };
  ValueId r0 = sum(x);
  ValueId n1 = *b.add("Neg", {x});
  ValueId a2 = *b.add("Add", {n1, r0});
  ValueId r3 = sum(a2);
  ValueId a4 = *b.add("Add", {y, r3});
  b.add_output(*b.add("Neg", {a4}));
  Graph g = *b.finish();
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  Placement p;
  for (NodeId n = 0; n < 6; ++n) p.groups.push_back(group(g, {n}));
  auto m = compile_placement(ctx, backends, g, p);
  REQUIRE(m.ok());
  CHECK(m->unshared_bytes() == 64 + 4032 + 4032 + 64 + 8000);
  CHECK(m->arena_bytes() == 8000 + 64 + 64);
  const Tensor xs = testing::random_f32({1000}, 5), ys = testing::random_f32({2000}, 6);
  auto want = run_reference(g, {xs, ys});
  REQUIRE(want.ok());
  // Runs from several threads at once each get an arena; finished runs' arenas are reused.
  std::vector<std::thread> threads;
  std::atomic<int> matched{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int r = 0; r < 5; ++r) {
        auto got = m->run({xs, ys});
        if (got.ok() && (*got)[0].identical((*want)[0])) ++matched;
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(matched == 20);
}

TEST_CASE("executor: a kernel's tasks run on the thread pool", "[executor]") {
  Context ctx;
  GraphBuilder b(ctx, "relu");
  ValueId x = b.add_input("x", {DType::f32, {1001}});
  b.add_output(*b.add("Exp", {*b.add("Relu", {x})}));
  Graph g = *b.finish();
  std::atomic<int> ran{0};
  BackendRegistry backends;
  REQUIRE(backends.add(std::make_unique<ChunkedReluBackend>(&ran)).ok());
  REQUIRE(backends.add(make_reference_backend()).ok());
  Placement p;
  p.groups = {group(g, {0}, "chunked"), group(g, {1})};
  ThreadPool pool(3);
  auto m = compile_placement(ctx, backends, g, p, {}, &pool);
  REQUIRE(m.ok());
  CHECK(m->groups()[0].task_count == 8);
  Tensor in = testing::random_f32({1001}, 4);
  auto got = m->run({in});
  REQUIRE(got.ok());
  CHECK(ran == 8);
  check_same(*got, *run_reference(g, {in}));
}

TEST_CASE("executor: errors name the group, node or input at fault", "[executor]") {
  Context ctx;
  Graph g = model(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  std::atomic<int> ran{0};
  REQUIRE(backends.add(std::make_unique<ChunkedReluBackend>(&ran, /*fail=*/true)).ok());
  auto error_of = [&](const Placement& p) {
    auto m = compile_placement(ctx, backends, g, p);
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(m.status().message());
  };
  Placement p;
  p.groups = {group(g, {0, 1}), group(g, {2, 3})};
  CHECK_THAT(error_of(p), Catch::Contains("node 't' is in no group"));
  p.groups.push_back(group(g, {3, 4}));
  CHECK_THAT(error_of(p), Catch::Contains("node 's' is in group 1 and group 2"));
  p.groups = {group(g, {0, 1}), group(g, {2, 3}), group(g, {4}, "cudnn")};
  CHECK_THAT(error_of(p), Catch::Contains("group 2 (cudnn: t): no backend named 'cudnn'"));
  p.groups = {group(g, {2, 3}), group(g, {0, 1}), group(g, {4})};
  CHECK_THAT(error_of(p), Catch::Contains("group 0 (reference: r s) reads 'a' before any earlier"));
  p.groups = {group(g, {0, 1}), group(g, {2, 3}, "chunked"), group(g, {4})};
  CHECK_THAT(error_of(p),
             Catch::Contains("group 1 (chunked: r s): build failed: only single Relu nodes"));

  p.groups = {group(g, {0, 1}), group(g, {2}, "chunked"), group(g, {3}), group(g, {4})};
  auto m = compile_placement(ctx, backends, g, p);
  REQUIRE(m.ok());
  auto bad_count = m->run({model_inputs()[0]});
  CHECK(bad_count.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad_count.status().message()),
             Catch::Contains("expected 2 inputs, got 1"));
  auto bad_type = m->run({model_inputs()[0], testing::random_f32({5, 3}, 1)});
  CHECK_THAT(std::string(bad_type.status().message()),
             Catch::Contains("input 1 'y': expected f32[3x5], got f32[5x3]"));
  auto failed = m->run(model_inputs());
  CHECK(failed.status().code() == absl::StatusCode::kInternal);
  CHECK_THAT(std::string(failed.status().message()),
             Catch::Contains("group 1 (chunked: r): chunk 1 failed"));
}
