// The measurer's builds: the fallback's kernels compiled side by side on
// fallback_build_threads threads, another backend's beside them on the calling thread, and a
// build that times a choice alone, before the others.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>

#include "collage/executor.h"
#include "core/str_cat.h"
#include "placement/measurer.h"
#include "placement/work_estimate.h"

using namespace collage;

namespace {

// Counts the builds running at once, across backends.
struct BuildCounter {
  std::atomic<int> running{0};
  std::mutex mu;
  int most = 0;           // the most builds seen running at once
  int most_fallback = 0;  // the most of the fallback's
  std::atomic<int> fallback_running{0};
  int beside_choice = -1;  // the most builds running beside the build that timed a choice
};

// Builds with the reference backend after sleeping `build_ms`, counting what runs beside. The
// group of the node named "choice" times a choice (as the native backend times a Winograd one)
// until one is remembered.
class CountingBackend : public Backend {
 public:
  CountingBackend(std::string name, BuildCounter& counter, int build_ms)
      : Backend(std::move(name), DeviceKind::cpu, "1"), counter_(counter), build_ms_(build_ms) {}

  bool build_times_choices(const Graph& group, const BuildOptions& options) const override {
    return is_choice(group) && options.choices && !options.choices->lookup("test-choice", "key");
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    const bool fallback = name() == "fallback";
    const bool timing = build_times_choices(group, options);
    note(++counter_.running, fallback ? ++counter_.fallback_running : 0);
    ::usleep(static_cast<useconds_t>(build_ms_) * 1000);
    if (timing) {
      std::lock_guard<std::mutex> lock(counter_.mu);
      counter_.beside_choice = std::max(counter_.beside_choice, counter_.most - 1);
      options.choices->remember("test-choice", "key", {1});
    }
    if (fallback) --counter_.fallback_running;
    --counter_.running;
    return make_reference_backend()->build(group, options);
  }

 private:
  static bool is_choice(const Graph& group) { return group.nodes()[0].name == "choice"; }
  void note(int running, int fallback_running) const {
    std::lock_guard<std::mutex> lock(counter_.mu);
    counter_.most = std::max(counter_.most, running);
    counter_.most_fallback = std::max(counter_.most_fallback, fallback_running);
  }

  BuildCounter& counter_;
  int build_ms_;
};

// A store of choices that counts nothing but what it keeps.
class MapChoices : public MeasuredChoices {
 public:
  std::optional<std::vector<double>> lookup(std::string_view kind, std::string_view key) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = values_.find(str_cat(kind, "|", key));
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  void remember(std::string_view kind, std::string_view key,
                const std::vector<double>& values) override {
    std::lock_guard<std::mutex> lock(mu_);
    values_[str_cat(kind, "|", key)] = values;
    ++measured_;
  }
  size_t measured() const override { return measured_; }
  size_t reused() const override { return 0; }
  std::vector<std::string> warnings() const override { return {}; }

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<double>> values_;
  size_t measured_ = 0;
};

struct Outcome {
  BuildCounter counter;
  size_t measured = 0;
  size_t choices = 0;
};

// Eight one-node groups of the fallback (each of its own shape, the third one "choice") and two
// of another backend, measured in one batch with `threads` build threads.
void measure_batch(int threads, Outcome& out) {
  Context ctx;
  GraphBuilder b(ctx, "ten");
  constexpr int kNodes = 10;
  for (int i = 0; i < kNodes; ++i) {
    ValueId x = b.add_input(str_cat("x", i), {DType::f32, {i + 1}});
    b.add_output(*b.add("Relu", {x}, nullptr, i == 2 ? "choice" : str_cat("r", i)));
  }
  Graph g = *b.finish();
  CountingBackend fallback("fallback", out.counter, 40), other("other", out.counter, 40);
  MapChoices choices;
  ThreadPool pool(2);
  MeasureOptions options;
  options.sampling.min_samples = 2;
  options.sampling.max_samples = 3;
  options.sampling.max_ms = 5;
  options.warmup_runs = 1;
  options.min_sample_ms = 0.01;
  options.always_backend = "fallback";
  options.fallback_build_threads = threads;
  options.graph_nodes = kNodes;
  options.choices = &choices;
  Measurer m(options, nullptr, "test-device", &pool);
  std::vector<Candidate> cands;
  for (NodeId n = 0; n < kNodes; ++n)
    cands.push_back({NodeSet::of(kNodes, {n}), n < 8 ? &fallback : &other, "test"});
  std::vector<ExtractedSubgraph> subs;
  for (const Candidate& c : cands) {
    auto sub = extract_subgraph(ctx, g, c.nodes);
    REQUIRE(sub.ok());
    subs.push_back(*std::move(sub));
  }
  std::vector<std::pair<const Candidate*, const ExtractedSubgraph*>> batch;
  for (size_t i = 0; i < cands.size(); ++i) batch.push_back({&cands[i], &subs[i]});
  m.prefetch(batch);
  for (size_t i = 0; i < cands.size(); ++i) {
    auto cost = m.cost(cands[i], subs[i]);
    INFO(i << ": " << cost.status().ToString());
    REQUIRE(cost.ok());
    CHECK(cost->samples > 0);
  }
  out.measured = m.measured();
  out.choices = choices.measured();
}

}  // namespace

TEST_CASE(
    "the measurer compiles the fallback's kernels side by side, another backend's beside "
    "them, and a build that times a choice alone",
    "[measurer]") {
  Outcome two;
  measure_batch(2, two);
  CHECK(two.measured == 10);
  CHECK(two.choices == 1);
  CHECK(two.counter.most_fallback == 2);
  CHECK(two.counter.most >= 2);
  CHECK(two.counter.beside_choice == 0);  // nothing ran while it timed its choice

  Outcome one;
  measure_batch(1, one);  // one build at a time
  CHECK(one.measured == 10);
  CHECK(one.counter.most == 1);
  CHECK(one.counter.beside_choice == 0);
}
