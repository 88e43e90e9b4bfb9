// The measurer: real kernels timed with the settle rule, identical groups measured once, build
// failures kept, costs persisted so a second measurer times nothing; the end-to-end measurer.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "collage/executor.h"
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

TEST_CASE("the work estimator: kernel times at the measured rate, builds per node",
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
  e.observe_build("a", 1, 800);  // an outlier moves the median, not the rate, little
  e.observe_build("a", 1, 3);
  CHECK(e.build_ms("a", 3) == Approx(9));
  CHECK(e.build_ms("c", 3) == Approx(9));  // no build of c: every backend's
  e.observe("b", small, /*run_ms=*/2, /*job_ms=*/1);
  CHECK(e.run_ms("b", twice) == Approx(4.0));
  CHECK(e.run_ms("a", twice) == Approx(1.0));
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
