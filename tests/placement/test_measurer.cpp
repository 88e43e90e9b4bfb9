// The measurer: real kernels timed with the settle rule, identical groups measured once, build
// failures kept, costs persisted so a second measurer times nothing, builds predicted from the
// kernel's own history, the fallback's reserve without the builds that timed a choice; the
// end-to-end measurer (with the artifact's layouts); the build tracker (kernels by their
// boundary's layouts); the build tally.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "collage/executor.h"
#include "core/str_cat.h"
#include "placement/build_tally.h"
#include "placement/build_tracker.h"
#include "placement/choice_store.h"
#include "placement/end_to_end.h"
#include "placement/measurer.h"
#include "placement/work_estimate.h"
#include "placement_fakes.h"

using namespace collage;
using namespace collage::testing;
namespace fs = std::filesystem;

namespace {

// Two identical Relu -> Tanh chains side by side, and a Sigmoid the backend refuses to build.
// n0 r1=Relu(x) n1 t1=Tanh(r1) n2 r2=Relu(y) n3 t2=Tanh(r2) n4 s=Sigmoid(t2)
Graph twins(const Context& ctx) {
  GraphBuilder b(ctx, "twins");
  ValueId x = b.add_input("x", {DType::f32, {256}});
  ValueId y = b.add_input("y", {DType::f32, {256}});
  b.add_output(*b.add("Tanh", {*b.add("Relu", {x}, nullptr, "r1")}, nullptr, "t1"));
  ValueId t2 = *b.add("Tanh", {*b.add("Relu", {y}, nullptr, "r2")}, nullptr, "t2");
  b.add_output(*b.add("Sigmoid", {t2}, nullptr, "s"));
  return *b.finish();
}

class PickyBackend : public Backend {
 public:
  PickyBackend() : Backend("picky", DeviceKind::cpu, "7") {}
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    for (const Node& n : group.nodes())
      if (n.op_name() == "Sigmoid") return absl::UnimplementedError("no Sigmoid here");
    return make_reference_backend()->build(group, options);
  }
};

MeasureOptions quick() {
  MeasureOptions m;
  m.sampling.min_samples = 4;
  m.sampling.max_samples = 12;
  m.sampling.max_ms = 50;
  m.warmup_runs = 1;
  m.min_sample_ms = 0.01;
  m.trusted_spread = 1e9;  // however busy the machine, trust what was measured
  return m;
}

}  // namespace

TEST_CASE("the measurer times kernels, shares identical groups, persists costs", "[measurer]") {
  Context ctx;
  Graph g = twins(ctx);
  PickyBackend backend;
  const fs::path dir = fs::temp_directory_path() / ("collage-measurer-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string path = (dir / "cost-db.jsonl").string();
  ThreadPool pool(2);
  auto cand = [&](std::vector<NodeId> nodes) {
    return Candidate{NodeSet::of(g.nodes().size(), nodes), &backend, "test"};
  };
  const Candidate first = cand({0, 1}), second = cand({2, 3}), bad = cand({4});
  auto sub1 = extract_subgraph(ctx, g, first.nodes), sub2 = extract_subgraph(ctx, g, second.nodes);
  auto sub3 = extract_subgraph(ctx, g, bad.nodes);
  REQUIRE(sub1.ok());
  REQUIRE(canonical_signature(sub1->graph) == canonical_signature(sub2->graph));
  {
    auto db = CostDatabase::open(path);
    REQUIRE(db.ok());
    Measurer m(quick(), &*db, "test-device", &pool);
    const std::pair<const Candidate*, const ExtractedSubgraph*> batch[] = {
        {&first, &*sub1}, {&second, &*sub2}, {&bad, &*sub3}};
    m.prefetch(batch);
    auto c1 = m.cost(first, *sub1);
    REQUIRE(c1.ok());
    CHECK(c1->ms > 0);
    CHECK(c1->samples >= 4);
    CHECK(c1->samples <= 12);
    CHECK(c1->spread >= 0);
    CHECK_FALSE(c1->from_cache);
    auto c2 = m.cost(second, *sub2);  // structurally identical: not measured again
    REQUIRE(c2.ok());
    CHECK(c2->ms == c1->ms);
    CHECK(c2->from_cache);
    auto c3 = m.cost(bad, *sub3);
    CHECK(c3.status().code() == absl::StatusCode::kUnimplemented);
    CHECK_THAT(std::string(c3.status().message()),
               Catch::Contains("build failed: no Sigmoid here"));
    CHECK(m.measured() == 1);
    CHECK(m.cached() == 1);
    const double b = m.boundary_ms(TensorType{DType::f32, {256}});
    CHECK(b > 0);
    CHECK(m.boundary_ms(TensorType{DType::f32, {256}}) == b);
    CHECK(m.boundary_ms(TensorType{DType::f32, {0}}) == 0);
    CHECK(db->size() == 2);  // the kernel and the boundary; failures are not persisted
  }
  {
    auto db = CostDatabase::open(path);
    REQUIRE(db.ok());
    Measurer m(quick(), &*db, "test-device", &pool);
    auto c = m.cost(first, *sub1);
    REQUIRE(c.ok());
    CHECK(c->from_cache);
    CHECK(m.boundary_ms(TensorType{DType::f32, {256}}) > 0);
    CHECK(m.measured() == 0);
    CHECK(db->size() == 2);
    // A shaky record (measured on a busy machine) is measured again and replaced.
    const std::string sig = canonical_signature(sub1->graph);
    CostRecord shaky{{"test-device", "picky", "7", stable_hash(sig)}, sig, 5.0, 3, 0.9, 1};
    REQUIRE(db->lookup(shaky.key));
    shaky.timestamp = db->lookup(shaky.key)->timestamp;
    REQUIRE(db->append(shaky).ok());
    MeasureOptions strict = quick();
    strict.trusted_spread = 0.5;
    Measurer again(strict, &*db, "test-device", &pool);
    auto c2 = again.cost(first, *sub1);
    REQUIRE(c2.ok());
    CHECK_FALSE(c2->from_cache);
    CHECK(again.remeasured() == 1);
    CHECK(again.measured() == 1);
    REQUIRE(db->lookup(shaky.key));
    CHECK(db->lookup(shaky.key)->spread != 0.9);
    CHECK(db->lookup(shaky.key)->measurements == 2);
    // A record measured a second time is trusted, however shaky.
    CostRecord shaky2 = shaky;
    shaky2.measurements = 2;
    shaky2.timestamp = db->lookup(shaky.key)->timestamp;
    REQUIRE(db->append(shaky2).ok());
    Measurer third(quick(), &*db, "test-device", &pool);
    auto c3 = third.cost(first, *sub1);
    REQUIRE(c3.ok());
    CHECK(c3->from_cache);
    CHECK(c3->ms == 5.0);
    CHECK(third.measured() == 0);
    // Another device, or another backend version, measures again.
    Measurer other(quick(), &*db, "other-device", &pool);
    REQUIRE(other.cost(first, *sub1).ok());
    CHECK(other.measured() == 1);
  }
  fs::remove_all(dir);
}

TEST_CASE("past skip_after_ms nothing is built: the always-measured backend's kernels are "
          "estimated, the others left out",
          "[measurer]") {
  Context ctx;
  Graph g = twins(ctx);
  PickyBackend picky;
  auto reference = make_reference_backend();
  ThreadPool pool(2);
  const NodeSet nodes = NodeSet::of(g.nodes().size(), {0, 1});
  const Candidate on_picky{nodes, &picky, "test"}, on_reference{nodes, reference.get(), "test"};
  auto sub = extract_subgraph(ctx, g, nodes);
  REQUIRE(sub.ok());
  MeasureOptions late = quick();
  late.skip_after_ms = 0;  // the budget is spent from the start
  late.always_backend = std::string(kReferenceBackend);
  Measurer m(late, nullptr, "test-device", &pool);
  auto skipped = m.cost(on_picky, *sub);
  CHECK(skipped.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK_THAT(std::string(skipped.status().message()),
             Catch::Contains("not measured: the time budget was spent"));
  auto kept = m.cost(on_reference, *sub);
  REQUIRE(kept.ok());
  // Nothing measured yet: the default rate. Relu and Tanh on 256 floats: 512 FLOPs, and 2 KiB
  // read and written.
  CHECK(kept->ms == Approx((512 + WorkEstimator::kWorkPerByte * 2048) /
                           WorkEstimator::kDefaultWorkPerMs));
  CHECK(kept->samples == 0);
  CHECK(m.measured() == 0);
  CHECK(m.estimated() == 1);
  CHECK(m.skipped() == 1);
}

TEST_CASE("the work estimator: kernel times at the measured rate, builds per node and per kernel "
          "by kind",
          "[measurer]") {
  WorkEstimator e;
  const GroupWork small{1e6, 0, 1}, twice{2e6, 0, 3};
  CHECK(e.run_ms("a", small) == Approx(1e6 / WorkEstimator::kDefaultWorkPerMs));
  CHECK(e.job_ms("a", twice) == 0);
  CHECK(e.build_ms("a", 3) == 0);
  e.observe("a", small, /*run_ms=*/0.5, /*job_ms=*/10);
  e.observe_build("a", 1, 8);
  CHECK(e.run_ms("a", twice) == Approx(1.0));
  CHECK(e.run_ms("b", twice) == Approx(1.0));  // no kernel of b yet: every backend's rate
  CHECK(e.job_ms("a", twice) == Approx(30));
  CHECK(e.build_ms("a", 3) == Approx(8));  // one build: its time (start included), no rate
  e.observe_build("a", 2, 4);  // the first build is left out from now on
  CHECK(e.build_ms("a", 3) == Approx(6));
  e.observe_build("a", 1, 800);  // a few builds: the smallest rate
  e.observe_build("a", 1, 3);
  CHECK(e.build_ms("a", 3) == Approx(6));
  CHECK(e.build_ms("c", 3) == Approx(6));  // no build of c: every backend's
  for (int i = 0; i < 5; ++i) e.observe_build("a", 1, 5);  // eight: the median, 800 moves it little
  CHECK(e.build_ms("a", 3) == Approx(15));
  // Slow first convolutions set no rate: the first build's, where it is smaller.
  e.observe_build("d", 1, 248);
  e.observe_build("d", 1, 1842);
  CHECK(e.build_ms("d", 124) == Approx(248 * 124));
  e.observe_build("d", 1, 325);
  e.observe_build("d", 1, 977);
  CHECK(e.build_ms("d", 124) == Approx(248 * 124));
  e.observe("b", small, /*run_ms=*/2, /*job_ms=*/1);
  CHECK(e.run_ms("b", twice) == Approx(4.0));
  CHECK(e.run_ms("a", twice) == Approx(1.0));
  // One kernel's build by its kind (a contraction among its nodes or not), once eight builds of
  // the kind are seen and within their node counts: a convolution with its epilogue of one or
  // two nodes builds in about the same time, a three-node elementwise group in far less.
  WorkEstimator k;
  for (int i = 0; i < 8; ++i) {
    k.observe_build("native", 1 + i % 2, 300, /*anchored=*/true);
    k.observe_build("native", 1 + i % 3, 80, /*anchored=*/false);
  }
  CHECK(k.kernel_build_ms("native", 2, true) == Approx(300));
  CHECK(k.kernel_build_ms("native", 1, true) == Approx(300));
  CHECK(k.kernel_build_ms("native", 3, false) == Approx(80));
  CHECK(k.build_ms("native", 3) > 200);  // per node, the kinds mixed: 80 a node
  CHECK(k.kernel_build_ms("dnnl", 2, true) == Approx(300));  // no build of dnnl: every backend's
  // Beyond the node counts seen (a whole-model region), or too few builds of the kind: per node.
  CHECK(k.kernel_build_ms("native", 50, true) == Approx(k.build_ms("native", 50)));
  k.observe_build("openvino", 2, 500, /*anchored=*/true);
  k.observe_build("openvino", 2, 700, /*anchored=*/true);
  CHECK(k.kernel_build_ms("openvino", 2, true) == Approx(k.build_ms("openvino", 2)));
}

TEST_CASE("the end-to-end measurer runs compiled placements", "[measurer]") {
  Context ctx;
  Graph g = twins(ctx);
  BackendRegistry r;
  REQUIRE(r.add(make_reference_backend()).ok());
  ThreadPool pool(2);
  EndToEndOptions options;
  options.sampling = {3, 5, 0.05, 50};
  EndToEndMeasurer e2e(ctx, r, g, &pool, options);
  Placement p;
  for (NodeId n = 0; n < 5; ++n) p.groups.push_back({NodeSet::of(5, {n}), "reference", "", -1, {}});
  auto ms = e2e.latency_ms(p);
  REQUIRE(ms.ok());
  CHECK(*ms > 0);
  p.groups[0].backend = "missing";
  CHECK_THAT(std::string(e2e.latency_ms(p).status().message()),
             Catch::Contains("no backend named 'missing'"));
}

namespace {

// Takes every 4-D value in 16-channel blocks and notes the layouts of the groups it builds; its
// kernels apply Relu element by element, which any layout allows.
class BlockedReluBackend : public Backend {
 public:
  BlockedReluBackend() : Backend("blocked", DeviceKind::cpu, "1") {}
  bool accepts_layout(const Graph&, ValueId, const Layout& layout) const override {
    return layout.plain() || layout.c_block == 16;
  }
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    std::string seen;
    for (ValueId v : group.inputs()) seen += group.value(v).layout.plain() ? "p" : "b";
    seen += ">";
    for (ValueId v : group.outputs()) seen += group.value(v).layout.plain() ? "p" : "b";
    built.push_back(seen);
    return std::unique_ptr<Kernel>(new ReluKernel(group.value(group.inputs()[0]).type.numel()));
  }
  mutable std::vector<std::string> built;

 private:
  class ReluKernel : public Kernel {
   public:
    explicit ReluKernel(int64_t n) : n_(n) {}
    int32_t task_count() const override { return 1; }
    absl::Status run_task(void* const* args, int32_t) override {
      const auto* in = static_cast<const float*>(args[0]);
      auto* out = static_cast<float*>(args[1]);
      for (int64_t i = 0; i < n_; ++i) out[i] = in[i] > 0 ? in[i] : 0;
      return absl::OkStatus();
    }
    const KernelRecord& record() const override { return record_; }

   private:
    int64_t n_;
    KernelRecord record_{"blocked", "relu", {}, {}};
  };
};

}  // namespace

TEST_CASE("the end-to-end measurer evaluates a placement with the layouts its artifact gets",
          "[measurer]") {
  // x -> Relu (group 0) -> Relu (group 1) -> y: the value between the groups is blocked when both
  // backends take it so, as the artifact build's assign_layouts decides; the kernels evaluated
  // are then the artifact's (before, every value was plain in evaluations: other kernels).
  Context ctx;
  GraphBuilder b(ctx, "two_relus");
  ValueId x = b.add_input("x", {DType::f32, {1, 32, 4, 4}});
  b.add_output(*b.add("Relu", {*b.add("Relu", {x}, nullptr, "a")}, nullptr, "b"));
  Graph g = *b.finish();
  BackendRegistry r;
  auto owned = std::make_unique<BlockedReluBackend>();
  const BlockedReluBackend& backend = *owned;
  REQUIRE(r.add(std::move(owned)).ok());
  ThreadPool pool(1);
  EndToEndOptions options;
  options.sampling = {3, 5, 0.05, 50};
  options.channel_block = 16;
  EndToEndMeasurer e2e(ctx, r, g, &pool, options);
  Placement p;
  p.groups.push_back({NodeSet::of(2, {0}), "blocked", "", -1, {}});
  p.groups.push_back({NodeSet::of(2, {1}), "blocked", "", -1, {}});
  REQUIRE(e2e.latency_ms(p).ok());
  CHECK(backend.built == std::vector<std::string>{"p>b", "b>p"});
  CHECK(assign_layouts(ctx, r, g, p, 16)[g.nodes()[0].outputs[0]].c_block == 16);
}

TEST_CASE("the build tracker notes each kernel with its boundary's layouts: the same group "
          "between other neighbours is another kernel",
          "[measurer]") {
  // x -> Relu a -> Relu b -> Relu c -> y. Evaluated as {a}{b}{c} on the blocking backend, b's
  // input and output are blocked, and kernel {b} is noted with both; group {a, b} was not built.
  // Then with b on the reference backend (which takes nothing blocked): {a} with a plain output,
  // another kernel of the same group, noted beside the first.
  Context ctx;
  GraphBuilder gb(ctx, "three_relus");
  ValueId x = gb.add_input("x", {DType::f32, {1, 32, 4, 4}});
  ValueId a = *gb.add("Relu", {x}, nullptr, "a");
  ValueId b = *gb.add("Relu", {a}, nullptr, "b");
  gb.add_output(*gb.add("Relu", {b}, nullptr, "c"));
  Graph g = *gb.finish();
  BackendRegistry r;
  REQUIRE(r.add(std::make_unique<BlockedReluBackend>()).ok());
  REQUIRE(r.add(make_reference_backend()).ok());
  ThreadPool pool(1);
  EndToEndOptions options;
  options.sampling = {3, 5, 0.05, 50};
  options.channel_block = 16;
  EndToEndMeasurer e2e(ctx, r, g, &pool, options);
  BuildTracker tracker(e2e, ctx, r, g, 16);
  auto group = [&](std::vector<NodeId> nodes, std::string backend) {
    return PlacedGroup{NodeSet::of(3, nodes), std::move(backend), "", -1, {}};
  };
  Placement three;
  three.groups = {group({0}, "blocked"), group({1}, "blocked"), group({2}, "blocked")};
  REQUIRE(tracker.latency_ms(three).ok());
  const std::vector<Layout> layouts = assign_layouts(ctx, r, g, three, 16);
  CHECK(blocked_boundary(g, NodeSet::of(3, {1}), layouts) == std::vector<ValueId>{a, b});
  CHECK(blocked_boundary(g, NodeSet::of(3, {0, 1}), layouts) == std::vector<ValueId>{b});
  CHECK(blocked_boundary(g, NodeSet::of(3, {1}), {}).empty());
  CHECK(tracker.built(NodeSet::of(3, {1}), "blocked", {a, b}));
  CHECK_FALSE(tracker.built(NodeSet::of(3, {1}), "blocked", {}));
  CHECK_FALSE(tracker.built(NodeSet::of(3, {1}), "reference", {a, b}));
  CHECK(tracker.built(NodeSet::of(3, {0}), "blocked", {a}));
  CHECK(tracker.built(NodeSet::of(3, {0}), "blocked"));
  CHECK_FALSE(tracker.built(NodeSet::of(3, {0, 1}), "blocked"));
  Placement mixed;
  mixed.groups = {group({0}, "blocked"), group({1}, "reference"), group({2}, "blocked")};
  CHECK(blocked_boundary(g, NodeSet::of(3, {0}), assign_layouts(ctx, r, g, mixed, 16)).empty());
  REQUIRE(tracker.latency_ms(mixed).ok());
  CHECK(tracker.built(NodeSet::of(3, {0}), "blocked", {}));
  CHECK(tracker.built(NodeSet::of(3, {0}), "blocked", {a}));
  // A failed evaluation notes nothing.
  Placement missing;
  missing.groups = {group({0, 1}, "missing"), group({2}, "blocked")};
  CHECK_FALSE(tracker.latency_ms(missing).ok());
  CHECK_FALSE(tracker.built(NodeSet::of(3, {0, 1}), "missing"));
}

namespace {

// Builds with the reference backend; a group of two nodes or more takes `slow_ms` longer.
class SlowBuildBackend : public Backend {
 public:
  explicit SlowBuildBackend(int slow_ms) : Backend("slowbuild", DeviceKind::cpu, "1"), slow_ms_(slow_ms) {}
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    if (group.nodes().size() >= 2) ::usleep(static_cast<useconds_t>(slow_ms_) * 1000);
    return make_reference_backend()->build(group, options);
  }

 private:
  int slow_ms_;
};

}  // namespace

TEST_CASE("a kernel's build is predicted from its own history: an identical kernel built in "
          "this compile, or its cost-database record",
          "[measurer]") {
  Context ctx;
  Graph g = twins(ctx);
  SlowBuildBackend backend(80);
  const fs::path dir =
      fs::temp_directory_path() / ("collage-build-history-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string path = (dir / "cost-db.jsonl").string();
  ThreadPool pool(1);
  const size_t n = g.nodes().size();
  // Three quick one-node builds (the first pays the backend's start and is left out of the
  // rate), then the slow chain r1 -> t1; its twin r2 -> t2 is the same code.
  std::vector<Candidate> cands;
  for (std::vector<NodeId> nodes : {std::vector<NodeId>{0}, {1}, {4}, {0, 1}, {2, 3}})
    cands.push_back({NodeSet::of(n, nodes), &backend, "test"});
  std::vector<ExtractedSubgraph> subs;
  for (const Candidate& c : cands) subs.push_back(*extract_subgraph(ctx, g, c.nodes));
  {
    auto db = CostDatabase::open(path);
    REQUIRE(db.ok());
    Measurer m(quick(), &*db, "test-device", &pool);
    for (size_t i = 0; i < cands.size(); ++i) REQUIRE(m.cost(cands[i], subs[i]).ok());
    CHECK(m.measured() == 4);
    CHECK(m.built(cands[3]));
    CHECK_FALSE(m.built(cands[4]));  // the twin's cost is shared, its kernel not built
    CHECK(m.predicted_build_ms(cands[3], false) >= 80);
    // Before: the backend's rate per node (under a millisecond) times two nodes.
    CHECK(m.predicted_build_ms(cands[4], false) >= 80);
  }
  {
    auto db = CostDatabase::open(path);
    REQUIRE(db.ok());
    const std::string sig = canonical_signature(subs[3].graph);
    auto record = db->lookup({"test-device", "slowbuild", "1", stable_hash(sig)});
    REQUIRE(record);
    CHECK(record->build_ms >= 80);
    // A later compile takes the cost from the database and builds nothing, yet knows what the
    // kernel costs to build (before: 0, no build seen).
    Measurer m(quick(), &*db, "test-device", &pool);
    auto c = m.cost(cands[4], subs[4]);
    REQUIRE(c.ok());
    CHECK(c->from_cache);
    CHECK(m.measured() == 0);
    CHECK(m.predicted_build_ms(cands[4], false) >= 80);
    CHECK(m.predicted_build_ms(cands[4], false) == Approx(record->build_ms));
  }
  fs::remove_all(dir);
}

TEST_CASE("build tally: builds counted by step and backend; tallied backends build and take "
          "layouts as theirs do",
          "[measurer]") {
  Context ctx;
  GraphBuilder b(ctx, "one_relu");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 2, 2}});
  b.add_output(*b.add("Relu", {x}, nullptr, "a"));
  Graph g = *b.finish();
  BackendRegistry r;
  REQUIRE(r.add(std::make_unique<BlockedReluBackend>()).ok());
  BuildTally tally;
  const BackendRegistry tallied = tallied_backends(r, tally);
  const Backend* blocked = tallied.find("blocked");
  REQUIRE(blocked);
  CHECK(blocked->accepts_layout(g, x, Layout::channel_blocked(16)));
  CHECK_FALSE(blocked->accepts_layout(g, x, Layout::channel_blocked(8)));
  tally.set_step("graph-level");
  REQUIRE(blocked->build(g, {}).ok());
  REQUIRE(blocked->build(g, {}).ok());
  tally.add("native", 250, "measure");
  tally.add("openvino", 1500, "measure");
  tally.add("native", 750, "measure");
  const std::vector<KernelBuilds> e = tally.entries();
  REQUIRE(e.size() == 3);
  CHECK((e[0].step == "graph-level" && e[0].backend == "blocked" && e[0].builds == 2));
  CHECK((e[1].step == "measure" && e[1].backend == "native" && e[1].builds == 2));
  CHECK(e[1].s == Approx(1.0));
  CHECK((e[2].step == "measure" && e[2].backend == "openvino" && e[2].s == Approx(1.5)));
}

namespace {

// Builds with the reference backend after `build_ms`; the group of the node named "choice"
// first times a measured choice (as the native backend times a Winograd one: three kernels
// built and run), which takes `choice_ms` more and is remembered.
class ChoosingBackend : public Backend {
 public:
  ChoosingBackend(int build_ms, int choice_ms)
      : Backend("choosing", DeviceKind::cpu, "1"), build_ms_(build_ms), choice_ms_(choice_ms) {}
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    ::usleep(static_cast<useconds_t>(build_ms_) * 1000);
    if (group.nodes()[0].name == "choice" && options.choices &&
        !options.choices->lookup("test-choice", "the key")) {
      ::usleep(static_cast<useconds_t>(choice_ms_) * 1000);
      options.choices->remember("test-choice", "the key", {1});
    }
    return make_reference_backend()->build(group, options);
  }

 private:
  int build_ms_, choice_ms_;
};

}  // namespace

TEST_CASE("the fallback's reserve: a build that timed a measured choice does not set the rate "
          "of the builds left, nor predict the group's next build",
          "[measurer]") {
  // Twenty one-node groups of the fallback, each of its own shape; the second times a choice.
  // Before, that build (610 ms for one node) set the rate per node, the 18 nodes left were
  // reserved 11 s of a 5 s budget, and every one of them was estimated instead of measured
  // (Inception-v3: measuring stopped after 2 s of a 60 s budget).
  Context ctx;
  GraphBuilder b(ctx, "twenty");
  constexpr int kNodes = 20;
  for (int i = 0; i < kNodes; ++i) {
    ValueId x = b.add_input(str_cat("x", i), {DType::f32, {i + 1}});
    b.add_output(*b.add("Relu", {x}, nullptr, i == 1 ? "choice" : str_cat("r", i)));
  }
  Graph g = *b.finish();
  ChoosingBackend backend(/*build_ms=*/10, /*choice_ms=*/600);
  CostDbChoices choices(nullptr, "test-device");
  ThreadPool pool(1);
  MeasureOptions options = quick();
  options.sampling.max_ms = 5;
  options.always_backend = "choosing";
  options.graph_nodes = kNodes;
  options.choices = &choices;
  options.end_ms = now_ms() + 5000;
  Measurer m(options, nullptr, "test-device", &pool);
  for (NodeId n = 0; n < kNodes; ++n) {
    const Candidate c{NodeSet::of(kNodes, {n}), &backend, "test"};
    auto sub = extract_subgraph(ctx, g, c.nodes);
    REQUIRE(sub.ok());
    auto cost = m.cost(c, *sub);
    REQUIRE(cost.ok());
    CHECK(cost->samples > 0);  // measured, not estimated from its work
  }
  CHECK(choices.measured() == 1);
  CHECK(m.measured() == kNodes);
  CHECK(m.estimated() == 0);
  CHECK_FALSE(m.cut_short());
  // Nor is it what building that group again should take (the choice remembered, or the group in
  // other boundary layouts): the rate of the others, not its 610 ms; a group that timed no choice
  // keeps its own build.
  const Candidate timed{NodeSet::of(kNodes, {1}), &backend, "test"};
  const Candidate plain{NodeSet::of(kNodes, {2}), &backend, "test"};
  CHECK(m.predicted_build_ms(timed, false) < 300);
  CHECK(m.predicted_build_ms(plain, false) >= 10);
  CHECK(m.predicted_build_ms(plain, false) < 300);
}
