// Artifacts with a wave schedule: the schedule written and read back, runs by the wave executor
// bit-identical to the sequential executor (repeated, and from 8 threads at once), the executor
// flags of the C API, an artifact without a schedule still running sequentially, and oneDNN
// kernels pinned to one thread each (run side by side) giving the sequential outputs.
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>

#include "artifact_generated.h"
#include "collage/backends/dnnl.h"
#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "placement/baselines.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

namespace fb = collage::artifact::fb;

// x f32[8x64] -> four branches MatMul(w_i) -> Relu, joined pairwise by Add: "out".
Graph branchy_graph(const Context& ctx) {
  GraphBuilder b(ctx, "branchy");
  ValueId x = b.add_input("x", {DType::f32, {8, 64}});
  std::vector<ValueId> branch;
  const char* names[] = {"w0", "w1", "w2", "w3"};
  for (int i = 0; i < 4; ++i) {
    ValueId w = b.add_constant(names[i], random_f32({64, 64}, 10 + i));
    branch.push_back(*b.add("Relu", {*b.add("MatMul", {x, w})}));
  }
  ValueId left = *b.add("Add", {branch[0], branch[1]});
  ValueId right = *b.add("Add", {branch[2], branch[3]});
  ValueId out = *b.add("Add", {left, right});
  b.set_value_name(out, "out");
  b.add_output(out);
  b.add_output(branch[3]);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

// x f32[1x16x12x12] -> four branches Conv 3x3 (w_i) -> Relu, joined pairwise by Add: "out"
// (on the dnnl backend: every kernel a oneDNN kernel with its own thread team).
Graph conv_branches_graph(const Context& ctx) {
  GraphBuilder b(ctx, "conv_branches");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 12, 12}});
  std::vector<ValueId> branch;
  const char* names[] = {"w0", "w1", "w2", "w3"};
  for (int i = 0; i < 4; ++i) {
    ValueId w = b.add_constant(names[i], random_f32({16, 16, 3, 3}, 20 + i));
    auto conv = b.add("Conv", {x, w}, make_attrs<ConvAttrs>([](ConvAttrs& a) {
                        a.pads = {1, 1, 1, 1};
                      }));
    REQUIRE(conv.ok());
    branch.push_back(*b.add("Relu", {*conv}));
  }
  ValueId left = *b.add("Add", {branch[0], branch[1]});
  ValueId right = *b.add("Add", {branch[2], branch[3]});
  ValueId out = *b.add("Add", {left, right});
  b.set_value_name(out, "out");
  b.add_output(out);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

std::string artifact_of(const Graph& g, waves::ExecutorChoice executor,
                        ArtifactSummary* summary = nullptr, const char* backend = "eigen") {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  REQUIRE(register_dnnl_backend(backends).ok());
  auto placement = place_single(g, backends, backend, {});
  REQUIRE(placement.ok());
  ArtifactOptions options;
  options.waves.executor = executor;
  options.waves.workers = 3;
  options.waves.measure_runs = 3;
  options.waves.profile_repeats = 1;
  auto bytes = compile_artifact(ctx, backends, g, *placement, options, summary);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  return std::move(*bytes);
}

ModulePtr load_with(const std::string& bytes, uint32_t flags, int32_t* code = nullptr,
                    std::string* message = nullptr) {
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.num_threads = 2;
  options.flags = flags;
  return load_bytes(bytes, &options, code, message);
}

std::string executor_of(const collage_module_t* m, uint64_t* runs = nullptr) {
  collage_executor_stats_t stats{};
  stats.struct_size = sizeof stats;
  REQUIRE(take_message(collage_module_executor_stats(m, &stats)).empty());
  if (runs) *runs = stats.runs;
  return stats.executor;
}

bool identical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].identical(b[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("waves: the schedule is written into the plan and read back", "[waves][artifact]") {
  Context ctx;
  ArtifactSummary summary;
  const std::string bytes = artifact_of(branchy_graph(ctx), waves::ExecutorChoice::waves, &summary);
  CHECK(summary.has_schedule);
  CHECK(summary.workers == 3);
  CHECK(summary.executor == "waves");
  CHECK(summary.waves_ms > 0);
  CHECK(summary.sequential_ms > 0);

  const std::vector<artifact::FileSection> sections = split_sections(bytes);
  const fb::Plan* plan = fb::GetPlan(sections[0].bytes.data());
  const fb::WaveSchedule* s = plan->schedule();
  REQUIRE(s);
  CHECK(s->version() == 1);
  CHECK(s->chunks()->size() == plan->kernels()->size());
  CHECK(s->workers()->size() == 3);
  CHECK(s->num_waves() == summary.num_waves);
  CHECK(s->num_segments() == summary.num_segments);
  CHECK(s->preferred() == fb::ExecutorKind::Waves);
  size_t entries = 0, chunks = 0;
  for (uint32_t w = 0; w < 3; ++w) entries += s->workers()->Get(w)->entries()->size();
  for (uint32_t c : *s->chunks()) chunks += c;
  CHECK(entries == chunks);
  // Every kernel's profiled time is recorded.
  REQUIRE(s->kernel_us());
  CHECK(s->kernel_us()->size() == plan->kernels()->size());
  for (float us : *s->kernel_us()) CHECK(us > 0);
  REQUIRE(s->exclusive());
  CHECK(s->exclusive()->size() == plan->kernels()->size());
  // The kernels are in wave order.
  std::vector<uint32_t> waves(s->wave_of_kernel()->begin(), s->wave_of_kernel()->end());
  CHECK(std::is_sorted(waves.begin(), waves.end()));

  // The runtime reads and checks it, and runs by it unless told otherwise.
  ModulePtr m = load_with(bytes, 0);
  REQUIRE(m);
  CHECK(executor_of(m.get()) == "waves");
  ModulePtr seq = load_with(bytes, COLLAGE_LOAD_EXECUTOR_SEQUENTIAL);
  REQUIRE(seq);
  CHECK(executor_of(seq.get()) == "sequential");
}

TEST_CASE("waves: the wave executor gives the sequential executor's outputs, bit for bit",
          "[waves][artifact]") {
  Context ctx;
  const Graph g = branchy_graph(ctx);
  const std::string bytes = artifact_of(g, waves::ExecutorChoice::waves);
  ModulePtr waves_m = load_with(bytes, COLLAGE_LOAD_EXECUTOR_WAVES);
  ModulePtr seq_m = load_with(bytes, COLLAGE_LOAD_EXECUTOR_SEQUENTIAL);
  REQUIRE(waves_m);
  REQUIRE(seq_m);
  const std::vector<Tensor> inputs = {random_f32({8, 64}, 3)};
  const std::vector<Tensor> expected = run_module(seq_m.get(), inputs);
  REQUIRE(expected.size() == 2);
  auto reference = run_reference(g, inputs);
  REQUIRE(reference.ok());
  CHECK(max_scaled_error(expected[0], (*reference)[0]) < 1e-4);

  int mismatches = 0;
  for (int r = 0; r < 100; ++r)
    if (!identical(run_module(waves_m.get(), inputs), expected)) ++mismatches;
  CHECK(mismatches == 0);
  uint64_t runs = 0;
  CHECK(executor_of(waves_m.get(), &runs) == "waves");
  CHECK(runs == 100);
}

TEST_CASE("waves: 8 threads x 50 runs on the wave executor match a sequential run",
          "[waves][artifact]") {
  Context ctx;
  const std::string bytes = artifact_of(branchy_graph(ctx), waves::ExecutorChoice::waves);
  ModulePtr m = load_with(bytes, COLLAGE_LOAD_EXECUTOR_WAVES);
  ModulePtr seq = load_with(bytes, COLLAGE_LOAD_EXECUTOR_SEQUENTIAL);
  REQUIRE(m);
  REQUIRE(seq);
  constexpr int kThreads = 8, kRuns = 50;
  std::vector<std::vector<Tensor>> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back({random_f32({8, 64}, 200 + t)});
    expected.push_back(run_module(seq.get(), inputs.back()));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        const int which = (t + r) % kThreads;
        if (!identical(run_module(m.get(), inputs[which]), expected[which])) ++mismatches[t];
      }
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) CHECK(mismatches[t] == 0);
  collage_executor_stats_t stats{};
  stats.struct_size = sizeof stats;
  REQUIRE(take_message(collage_module_executor_stats(m.get(), &stats)).empty());
  // Every run went through the workers or, when they were busy, the sequential executor.
  CHECK(stats.runs + stats.fallback_runs == kThreads * kRuns);
}

TEST_CASE("waves: an artifact without a schedule runs sequentially; waves are refused",
          "[waves][artifact]") {
  Context ctx;
  ArtifactSummary summary;
  const std::string bytes = artifact_of(branchy_graph(ctx), waves::ExecutorChoice::none, &summary);
  CHECK_FALSE(summary.has_schedule);
  const std::vector<artifact::FileSection> sections = split_sections(bytes);
  CHECK(fb::GetPlan(sections[0].bytes.data())->schedule() == nullptr);
  ModulePtr m = load_with(bytes, 0);
  REQUIRE(m);
  CHECK(executor_of(m.get()) == "sequential");
  CHECK(run_module(m.get(), {random_f32({8, 64}, 1)}).size() == 2);
  int32_t code = 0;
  std::string message;
  CHECK_FALSE(load_with(bytes, COLLAGE_LOAD_EXECUTOR_WAVES, &code, &message));
  CHECK(code == COLLAGE_STATUS_UNSUPPORTED);
  CHECK_THAT(message, Catch::Contains("no wave schedule"));
  CHECK_FALSE(load_with(bytes, COLLAGE_LOAD_EXECUTOR_WAVES | COLLAGE_LOAD_EXECUTOR_SEQUENTIAL,
                        &code, &message));
  CHECK(code == COLLAGE_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("waves: automatic keeps the wave executor only when it measured faster",
          "[waves][artifact]") {
  Context ctx;
  ArtifactSummary summary;
  const std::string bytes =
      artifact_of(branchy_graph(ctx), waves::ExecutorChoice::automatic, &summary);
  REQUIRE(summary.has_schedule);
  if (summary.executor == "waves") CHECK(summary.waves_ms < summary.sequential_ms);
  ModulePtr m = load_with(bytes, 0);
  REQUIRE(m);
  CHECK(executor_of(m.get()) == summary.executor);
}

TEST_CASE("waves: a schedule whose waits do not order the dependencies is corrupt",
          "[waves][artifact]") {
  Context ctx;
  const std::string bytes = artifact_of(branchy_graph(ctx), waves::ExecutorChoice::waves);
  std::vector<artifact::FileSection> sections = split_sections(bytes);
  std::string& plan_bytes = sections[0].bytes;
  const fb::WaveSchedule* s = fb::GetPlan(plan_bytes.data())->schedule();
  REQUIRE(s);
  // Every wait made trivially true (count 0): nothing orders the workers any more.
  size_t waits = 0;
  for (uint32_t w = 0; w < s->workers()->size(); ++w) {
    const auto* list = s->workers()->Get(w)->waits();
    for (uint32_t j = 0; list && j < list->size(); ++j) {
      const size_t at = reinterpret_cast<const char*>(list->Get(j)) - plan_bytes.data();
      std::memset(plan_bytes.data() + at + 4, 0, 4);  // WaveWait.count
      ++waits;
    }
  }
  REQUIRE(waits > 0);
  const std::string damaged = artifact::assemble_artifact(sections);
  int32_t code = 0;
  std::string message;
  CHECK_FALSE(load_with(damaged, 0, &code, &message));
  CHECK(code == COLLAGE_STATUS_CORRUPT);
  CHECK_THAT(message, Catch::Contains("wave schedule") && Catch::Contains("may run before"));
}

namespace {

// The plan of `sections` with the schedule's per-kernel thread counts set to `threads` (and the
// exclusive flags cleared where a count is set), bytes patched in place.
std::string with_threads(std::vector<artifact::FileSection> sections,
                         const std::vector<uint32_t>& threads) {
  std::string& plan_bytes = sections[0].bytes;
  const fb::WaveSchedule* s = fb::GetPlan(plan_bytes.data())->schedule();
  REQUIRE(s);
  REQUIRE(s->threads());
  REQUIRE(s->threads()->size() == threads.size());
  REQUIRE(s->exclusive());
  const size_t at = reinterpret_cast<const char*>(s->threads()->Data()) - plan_bytes.data();
  const size_t excl = reinterpret_cast<const char*>(s->exclusive()->Data()) - plan_bytes.data();
  for (size_t k = 0; k < threads.size(); ++k) {
    std::memcpy(plan_bytes.data() + at + 4 * k, &threads[k], 4);
    if (threads[k]) plan_bytes[excl + k] = 0;
  }
  return artifact::assemble_artifact(sections);
}

}  // namespace

TEST_CASE("waves: oneDNN kernels pinned to one thread each give the sequential outputs",
          "[waves][artifact]") {
  Context ctx;
  const Graph g = conv_branches_graph(ctx);
  ArtifactSummary summary;
  const std::string bytes = artifact_of(g, waves::ExecutorChoice::waves, &summary, "dnnl");
  const std::vector<artifact::FileSection> sections = split_sections(bytes);
  const fb::Plan* plan = fb::GetPlan(sections[0].bytes.data());
  const size_t n = plan->kernels()->size();
  for (const fb::Kernel* k : *plan->kernels()) CHECK(k->backend()->str() == "dnnl");
  // The scheduler wrote a thread count per kernel, each 0 or 1 (the pinned variant).
  const fb::WaveSchedule* s = plan->schedule();
  REQUIRE(s);
  REQUIRE(s->threads());
  REQUIRE(s->threads()->size() == n);
  for (uint32_t k = 0; k < n; ++k) {
    CHECK(s->threads()->Get(k) <= 1);
    CHECK_FALSE((s->threads()->Get(k) && s->exclusive()->Get(k)));
  }

  // Whatever the profiles chose here, every kernel pinned: the four convolutions side by side on
  // three workers, each on one thread, and the adds beside them.
  const std::string pinned = with_threads(sections, std::vector<uint32_t>(n, 1));
  ModulePtr waves_m = load_with(pinned, COLLAGE_LOAD_EXECUTOR_WAVES);
  ModulePtr seq_m = load_with(pinned, COLLAGE_LOAD_EXECUTOR_SEQUENTIAL);
  REQUIRE(waves_m);
  REQUIRE(seq_m);
  CHECK(executor_of(waves_m.get()) == "waves");
  const std::vector<Tensor> inputs = {random_f32({1, 16, 12, 12}, 5)};
  const std::vector<Tensor> expected = run_module(seq_m.get(), inputs);
  REQUIRE(expected.size() == 1);
  auto reference = run_reference(g, inputs);
  REQUIRE(reference.ok());
  CHECK(max_scaled_error(expected[0], (*reference)[0]) < 1e-4);
  int mismatches = 0;
  for (int r = 0; r < 50; ++r)
    if (!identical(run_module(waves_m.get(), inputs), expected)) ++mismatches;
  CHECK(mismatches == 0);
  // And as compiled.
  ModulePtr compiled = load_with(bytes, COLLAGE_LOAD_EXECUTOR_WAVES);
  REQUIRE(compiled);
  CHECK(identical(run_module(compiled.get(), inputs), expected));
}

TEST_CASE("waves: a schedule with a bad thread count is corrupt", "[waves][artifact]") {
  Context ctx;
  const std::string bytes =
      artifact_of(conv_branches_graph(ctx), waves::ExecutorChoice::waves, nullptr, "dnnl");
  const std::vector<artifact::FileSection> sections = split_sections(bytes);
  const size_t n = fb::GetPlan(sections[0].bytes.data())->kernels()->size();
  std::vector<uint32_t> threads(n, 0);
  threads[1] = 7;  // on 3 workers
  int32_t code = 0;
  std::string message;
  CHECK_FALSE(load_with(with_threads(sections, threads), 0, &code, &message));
  CHECK(code == COLLAGE_STATUS_CORRUPT);
  CHECK_THAT(message,
             Catch::Contains("wave schedule") && Catch::Contains("kernel 1: runs with 7 threads"));
}
