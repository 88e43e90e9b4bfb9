// The compile driver (include/collage/compiler.h): import -> passes -> placement -> build ->
// artifact, once for the command line, the C API and C++ programs.
#include "collage/compiler.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/str_format.h"
#include "artifact/artifact.h"
#include "collage/backend_loader.h"
#include "collage/executor.h"
#include "collage/kernel_shelf.h"
#include "collage/onnx.h"
#include "core/str_cat.h"
#include "driver/batch_variants.h"
#include "driver/build_reserve.h"
#include "driver/tree_strategy.h"
#include "io/file_io.h"
#include "placement/build_tally.h"

namespace collage {
namespace {

std::string group_nodes(const Graph& g, const PlacedGroup& group) {
  std::string s;
  const std::vector<NodeId> nodes = group.nodes.to_vector();
  for (size_t i = 0; i < nodes.size() && i < 3; ++i)
    s += str_cat(i ? ", " : "", g.node(nodes[i]).name, " (", g.node(nodes[i]).op_name(), ")");
  if (nodes.size() > 3) s += str_cat(" +", nodes.size() - 3);
  return s;
}

// The options of a placement that goes into an artifact. An artifact cannot hold kernels of the
// reference backend (the runtime has none), and the measured search may well find one cheaper (a
// MaxPool of ResNet-50 once was): when the generated-code backend, which runs any node, is
// registered, it replaces the reference fallback and the reference takes no part.
PlacementOptions artifact_placement(const BackendRegistry& backends, PlacementOptions options) {
  if (!backends.find(kNativeBackend)) return options;
  options.fallback = std::string(kNativeBackend);
  if (options.backends.empty())
    for (const Backend* b : backends.all()) options.backends.push_back(b->name());
  std::erase(options.backends, std::string(kReferenceBackend));
  return options;
}

// Every group of an artifact needs a backend with a runtime module: the reference has none, so
// a group only it can run is named, with the backends that took part.
absl::Status check_artifact_groups(const Graph& g, const Placement& p,
                                   const BackendRegistry& backends,
                                   const PlacementOptions& options) {
  for (size_t i = 0; i < p.groups.size(); ++i) {
    if (p.groups[i].backend != kReferenceBackend) continue;
    std::vector<std::string> names = options.backends;
    if (names.empty())
      for (const Backend* b : backends.all()) names.push_back(b->name());
    std::string others;
    for (const std::string& name : names)
      if (name != kReferenceBackend) others += str_cat(others.empty() ? "" : ", ", name);
    return absl::InvalidArgumentError(str_cat(
        "group ", i, " (", group_nodes(g, p.groups[i]),
        ") is placed on the reference backend, which has no runtime module: an artifact needs "
        "every group on a backend with one (taking part: ",
        others,
        "). The generated-code backend (native), which runs any operator, takes the reference's "
        "place in artifacts where it is registered; without it, run the placement in process "
        "(compile_placement, `collage run MODEL --placement ...`)"));
  }
  return absl::OkStatus();
}

// The share of the compile's time budget (PlacementOptions::time_budget_s) kept for measuring the
// artifact's executors (each of the two comparisons of whole runs that make_artifact_schedule may
// make; at most WaveOptions' default), out of the build's (build_reserve.h).
constexpr double kScheduleShare = 0.04;
// Runs of the model that measuring its executors under `waves` takes, about: the kernels'
// profiles, the untimed and the fewest timed runs of each executor, and as many again where a
// thread team's place is compared (33 with WaveOptions' defaults).
double schedule_runs(const waves::WaveOptions& waves) {
  return waves.profile_repeats + 2 * 2 * (waves.measure_warmup + waves.measure_min_runs);
}

// Whether `cut` (OptimizeResult::cut: "STEP: why") says the time budget cut step `step`.
bool step_cut(const std::vector<std::string>& cut, std::string_view step) {
  return std::any_of(cut.begin(), cut.end(), [&](const std::string& c) {
    return c.size() > step.size() && c.starts_with(step) && c[step.size()] == ':';
  });
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The step of CompileResult::phases a placement progress phase belongs to.
std::string_view phase_step(std::string_view phase) {
  if (phase == "seeds" || phase == "evolve" || phase == "finalists" || phase == "done")
    return "graph-level";
  return phase;
}

// Wall time per step, in the order the steps first ran: each step lasts until the next begins.
class PhaseClock {
 public:
  void begin(std::string_view step) {
    const auto now = std::chrono::steady_clock::now();
    if (!phases_.empty())
      phases_[current_].second += std::chrono::duration<double>(now - since_).count();
    since_ = now;
    for (current_ = 0; current_ < phases_.size(); ++current_)
      if (phases_[current_].first == step) return;
    phases_.emplace_back(std::string(step), 0.0);
  }
  std::vector<std::pair<std::string, double>> finish() {
    begin("");
    phases_.pop_back();
    return std::move(phases_);
  }

 private:
  std::vector<std::pair<std::string, double>> phases_;
  size_t current_ = 0;
  std::chrono::steady_clock::time_point since_;
};

// The measured choices of a compile: the caller's (PlacementOptions::choices), else a store over
// the cost database that `owned` keeps for the compile; set in `placement`.
absl::Status use_choices(PlacementOptions& placement, std::unique_ptr<MeasuredChoices>& owned) {
  if (placement.choices) return absl::OkStatus();
  auto store = open_measured_choices(placement);
  if (!store.ok()) return store.status();
  owned = *std::move(store);
  placement.choices = owned.get();
  return absl::OkStatus();
}

// How the placed groups are built into an artifact: with the placement's threads, target, code
// cache, channel block and measured choices, under the executor it was scored with, its
// executors measured within their share of the compile's `budget_s` and the `left_s` seconds
// of it that are left: none left, nothing is measured (the choices already remembered, else the
// defaults: the direct convolution, the sequential executor). The executors are not measured
// either when schedule_runs runs of `run_ms` (a run of the placed model; <= 0: not known) would
// not end in `left_s` (ViT-B/16 at 0.43 s a run: 8.5 s of runs with 5 s left).
ArtifactOptions artifact_options(const PlacementOptions& placement, double budget_s, double left_s,
                                 double run_ms = 0) {
  ArtifactOptions artifact;
  artifact.waves.measure_max_ms = std::min(
      {artifact.waves.measure_max_ms, 1000 * kScheduleShare * budget_s, 1000 * left_s / 2});
  artifact.build.measure_choices = left_s > 0;
  artifact.waves.measure = left_s > 0 && run_ms * schedule_runs(artifact.waves) <= 1000 * left_s;
  artifact.build.num_threads = placement.num_threads;
  // Native kernels are built on every core, but for one that times a choice, which runs alone
  // (build_artifact_kernels).
  artifact.build_threads = placement.num_threads > 0
                               ? placement.num_threads
                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  artifact.build.target = placement.target;
  artifact.build.code_cache = placement.code_cache;
  artifact.build.channel_block = placement.channel_block;
  artifact.build.choices = placement.choices;
  artifact.build.shelf = placement.shelf;
  artifact.waves.executor = wave_choice(placement.executor);
  artifact.waves.choices = placement.choices;
  return artifact;
}

TreeCompileOptions tree_compile_options(const CompileOptions& options,
                                        const PlacementOptions& placement) {
  TreeCompileOptions trees;
  trees.mode = options.tree_strategy;
  trees.placement = placement;
  // A candidate is placed quietly: the compile's own progress reports the model's placement.
  trees.placement.progress = nullptr;
  trees.passes = options.passes;
  trees.artifact = options.artifact;
  trees.progress = options.tree_progress;
  return trees;
}

}  // namespace

ModelSource ModelSource::file(std::filesystem::path path) {
  return ModelSource(std::move(path));
}

ModelSource ModelSource::onnx_bytes(std::span<const uint8_t> bytes,
                                    std::filesystem::path base_dir) {
  return ModelSource(OnnxBytes{{bytes.begin(), bytes.end()}, std::move(base_dir)});
}

ModelSource ModelSource::graph(Graph graph) {
  return ModelSource(std::move(graph));
}

std::string ModelSource::description() const {
  if (const auto* path = std::get_if<std::filesystem::path>(&source_)) return path->string();
  if (const auto* onnx = std::get_if<OnnxBytes>(&source_))
    return str_cat("ONNX model in memory (", onnx->bytes.size(), " bytes)");
  return str_cat("graph '", std::get<Graph>(source_).name(), "'");
}

Compiler::Compiler()
    : ctx_(std::make_unique<Context>()), backends_(std::make_unique<BackendRegistry>()) {}

absl::StatusOr<Compiler> Compiler::create(CompilerOptions options) {
  Compiler c;
  if (options.builtin_backends) {
    if (absl::Status s = register_builtin_backends(*c.backends_, options.native); !s.ok()) return s;
  }
  return c;
}

absl::Status Compiler::load_plugin(const std::filesystem::path& path) {
  auto backend = load_backend_plugin(path.string());
  if (!backend.ok()) return backend.status();
  if (absl::Status s = backends_->add(*std::move(backend)); !s.ok())
    return absl::InvalidArgumentError(str_cat(path.string(), ": ", s.message()));
  return absl::OkStatus();
}

PlacementOptions Compiler::placement_options(const CompileOptions& options) const {
  return options.artifact ? artifact_placement(*backends_, options.placement) : options.placement;
}

absl::StatusOr<ImportedModel> Compiler::import(const ModelSource& model,
                                               const CompileOptions& options,
                                               const PlacementOptions& placement) const {
  if (const Graph* g = std::get_if<Graph>(&model.source_)) return ImportedModel{*g, {}};
  const TreeCompileOptions trees = tree_compile_options(options, placement);
  if (const auto* path = std::get_if<std::filesystem::path>(&model.source_)) {
    auto m = import_compile_model(*ctx_, *backends_, *path, options.import, trees);
    if (!m.ok()) return m.status();
    return ImportedModel{std::move(m->graph), std::move(m->trees)};
  }
  const ModelSource::OnnxBytes& onnx = std::get<ModelSource::OnnxBytes>(model.source_);
  ImportedModel imported;
  OnnxImportOptions import = options.import.onnx;
  import.tree_strategy = compile_tree_strategy_chooser(*ctx_, *backends_, trees, imported.trees);
  auto g = import_onnx_buffer(*ctx_, onnx.bytes, import, onnx.base_dir);
  if (!g.ok()) return g.status();
  imported.graph = *std::move(g);
  return imported;
}

absl::StatusOr<ImportedModel> Compiler::import_model(const ModelSource& model,
                                                     const CompileOptions& options) const {
  auto imported = import(model, options, placement_options(options));
  if (!imported.ok() || !options.passes) return imported;
  auto g = run_passes(*ctx_, imported->graph, options.pass_options);
  if (!g.ok()) return g.status();
  imported->graph = *std::move(g);
  return imported;
}

absl::StatusOr<CompileResult> Compiler::compile(const ModelSource& model,
                                                const CompileOptions& options) const {
  return compile(model, options, nullptr);
}

absl::StatusOr<CompileResult> Compiler::compile(const ModelSource& model,
                                                const CompileOptions& options,
                                                const std::filesystem::path* artifact_path) const {
  if (options.batch.max) {
    auto r = compile_batch(model, options);
    if (!r.ok() || !artifact_path) return r;
    auto writer = io::AtomicFileWriter::create(*artifact_path);
    if (!writer.ok()) return writer.status();
    if (absl::Status s = (*writer)->write(r->artifact); !s.ok()) return s;
    if (absl::Status s = (*writer)->commit(); !s.ok()) return s;
    r->artifact.clear();
    return r;
  }
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  PhaseClock phases;
  phases.begin("import");
  if (options.step_progress) options.step_progress("import");
  auto imported = import_model(model, options);
  if (!imported.ok()) return imported.status();
  CompileResult r;
  r.model = model.description();
  r.passes = options.passes;
  r.graph = std::move(imported->graph);
  r.trees = std::move(imported->trees);
  r.import_s = seconds_since(start);
  start = Clock::now();
  PlacementOptions placement = placement_options(options);
  if (!placement.executor_latency) placement.executor_latency = artifact_executor_latency(*ctx_);
  // The budget bounds the whole compile: the placement gets it less a reserve for building the
  // artifact (whose executor measurement is bounded by its own share), the import counted as
  // spent.
  const double budget_s = placement.time_budget_s;
  double constant_bytes = 0;
  for (const Tensor& c : r.graph.constants()) constant_bytes += static_cast<double>(c.bytes());
  const double write_s = write_seconds(constant_bytes);
  if (options.artifact)
    placement.time_budget_s -= build_reserve_s(*backends_, placement, constant_bytes);
  placement.spent_s = r.import_s;
  std::unique_ptr<MeasuredChoices> choices;
  if (absl::Status s = use_choices(placement, choices); !s.ok()) return s;
  const size_t choices_measured = placement.choices->measured();
  const size_t choices_reused = placement.choices->reused();
  // The kernels measurement and evaluation build, kept for the artifact build (the caller's
  // shelf, if it gave one, serves several compiles).
  KernelShelf own_shelf;
  if (!placement.shelf) placement.shelf = &own_shelf;
  const size_t kernels_built = placement.shelf->built();
  const size_t kernels_reused = placement.shelf->reused();
  const auto count_kernels = [&] {
    r.kernels_built = placement.shelf->built() - kernels_built;
    r.kernels_reused = placement.shelf->reused() - kernels_reused;
  };
  std::optional<Clock::time_point> compare_start;
  phases.begin("placement");
  placement.progress = [&compare_start, &phases,
                        inner = placement.progress](const PlacementProgress& p) {
    if (p.phase == "compare" && !compare_start) compare_start = Clock::now();
    phases.begin(phase_step(p.phase));
    if (inner) inner(p);
  };
  auto optimized = optimize_detailed(*ctx_, *backends_, r.graph, placement);
  if (!optimized.ok()) return optimized.status();
  r.optimized = *std::move(optimized);
  r.placement_s = seconds_since(start);
  const auto count_choices = [&] {
    r.choices_measured = placement.choices->measured() - choices_measured;
    r.choices_reused = placement.choices->reused() - choices_reused;
  };
  count_choices();
  count_kernels();
  if (compare_start) r.compare_s = seconds_since(*compare_start);
  if (!options.artifact) {
    r.cut = r.optimized.cut;
    r.phases = phases.finish();
    return r;
  }
  start = Clock::now();
  phases.begin("build");
  if (absl::Status s = check_artifact_groups(r.graph, r.optimized.placement, *backends_, placement);
      !s.ok())
    return s;
  if (options.step_progress) options.step_progress("build");
  // What is left of the budget, the build's share included, less what building the kernels the
  // measurer did not build should take (nothing replaces them).
  const double left_s =
      budget_s - r.import_s - r.placement_s - r.optimized.build_estimate_s;
  r.cut = r.optimized.cut;
  // A placement an earlier compile chose is built as that compile built it: with the choices it
  // remembered and the defaults where it measured none (the same artifact), nothing measured.
  const bool reused = r.optimized.chosen_by == "remembered";
  const double run_ms = r.optimized.placement.estimated_ms;
  ArtifactOptions artifact = artifact_options(placement, budget_s, reused ? 0 : left_s, run_ms);
  // Decided again once the kernels are built and recorded, against the budget's end less the
  // artifact's write (its constants streamed to disk: BERT-base's 416 MiB took 1.4-1.6 s).
  if (artifact.waves.measure) {
    artifact.waves.measure_until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                           budget_s - r.import_s - r.placement_s - write_s));
    artifact.waves.measure_runs_ms = run_ms * schedule_runs(artifact.waves);
  }
  if (left_s <= 0 && !reused) {
    r.cut.push_back(
        "build: no choice measured (Winograd or direct: direct where none is remembered; the "
        "executor: sequential, its wave schedule not profiled)");
  } else if (!reused && !artifact.waves.measure &&
             artifact.waves.executor == waves::ExecutorChoice::automatic) {
    r.cut.push_back(absl::StrFormat(
        "build: the executors not measured (about %.0f runs of %.1f ms, %.1f s were left): "
        "sequential, its wave schedule not profiled",
        schedule_runs(artifact.waves), run_ms, left_s));
  }
  if (left_s > 0 && !reused && step_cut(r.cut, "measure")) {
    // As the evaluations after the cut: a Winograd choice builds two more kernels per
    // convolution and times all three (ResNet-50 at load 12: a 36 s build, 30 s over budget).
    artifact.build.measure_choices = false;
    r.cut.push_back(
        "build: no Winograd choice measured (the budget cut the kernels' measurement; direct "
        "where none is remembered)");
  }
  // The artifact's kernels built by backends that count their builds (step "build").
  BuildTally tally;
  tally.set_step("build");
  const BackendRegistry tallied = tallied_backends(*backends_, tally);
  auto image = compile_artifact_image(*ctx_, tallied, r.graph, r.optimized.placement, artifact,
                                      &r.summary);
  if (!image.ok()) return image.status();
  if (artifact.waves.measure && artifact.waves.executor == waves::ExecutorChoice::automatic &&
      r.summary.waves_ms <= 0 && r.summary.sequential_ms <= 0 &&
      !artifact.waves.measure_in_time())
    r.cut.push_back(absl::StrFormat(
        "build: the executors not measured (about %.0f runs of %.1f ms would not have ended "
        "before the budget, %.1f s kept for the write, once the kernels were built and "
        "recorded): sequential, its wave schedule not profiled",
        schedule_runs(artifact.waves), run_ms, write_s));
  if (artifact_path) {
    phases.begin("write");
    if (absl::Status s = image->write_file(*artifact_path); !s.ok()) return s;
  } else {
    r.artifact = image->bytes();
  }
  r.artifact_s = seconds_since(start);
  r.phases = phases.finish();
  count_choices();
  const size_t built_before_build = r.kernels_built;
  count_kernels();
  r.kernels_built_by_build = r.kernels_built - built_before_build;
  r.builds = r.optimized.builds;
  for (const KernelBuilds& k : tally.entries()) r.builds.push_back(k);
  for (const std::string& w : placement.choices->warnings())
    r.optimized.placement.notes.push_back(str_cat("cost database: ", w));
  return r;
}

absl::StatusOr<CompileResult> Compiler::compile_batch(const ModelSource& model,
                                                      const CompileOptions& options) const {
  if (std::holds_alternative<Graph>(model.source_))
    return absl::InvalidArgumentError(
        str_cat(model.description(),
                ": a batch range needs a model file or ONNX bytes, which are "
                "imported once per batch"));
  if (!options.artifact)
    return absl::InvalidArgumentError(
        str_cat(model.description(), ": a batch range compiles into an artifact"));
  const auto start = std::chrono::steady_clock::now();
  PlacementOptions placement = placement_options(options);
  if (!placement.executor_latency) placement.executor_latency = artifact_executor_latency(*ctx_);
  std::unique_ptr<MeasuredChoices> choices;
  if (absl::Status s = use_choices(placement, choices); !s.ok()) return s;
  if (options.step_progress) options.step_progress("import");
  std::vector<TreeStrategyReport> trees;
  const ImportAtBatch import = [&](int64_t batch) -> absl::StatusOr<Graph> {
    CompileOptions at = options;
    for (const auto& [name, axis] : options.batch.axes) {
      Shape& shape = at.import.onnx.input_shapes[name];
      if (axis < 0 || static_cast<size_t>(axis) >= shape.size())
        return absl::InvalidArgumentError(str_cat("batch range: input '", name,
                                                  "' has no dimension ", axis,
                                                  " in its given shape ", shape_to_string(shape)));
      shape[static_cast<size_t>(axis)] = batch;
    }
    auto m = import_model(model, at);
    if (!m.ok()) return m.status();
    trees = std::move(m->trees);
    return std::move(m->graph);
  };
  auto batch = compile_batch_variants(*ctx_, *backends_, import, options.batch, placement,
                                      artifact_options(placement, placement.time_budget_s,
                                                       placement.time_budget_s),
                                      options.batch_progress);
  if (!batch.ok()) return batch.status();
  CompileResult r;
  r.model = model.description();
  r.passes = options.passes;
  r.graph = batch->variants.back().graph;
  r.optimized = batch->variants.back().optimized;
  r.trees = std::move(trees);
  r.artifact = std::move(batch->artifact);
  r.summary = batch->summary;
  r.batch_min = options.batch.min;
  r.batch_max = options.batch.max;
  r.batches = std::move(batch->variants);
  r.padded = batch->padded;
  r.batch_note = std::move(batch->note);
  r.placement_s = seconds_since(start);
  r.choices_measured = placement.choices->measured();
  r.choices_reused = placement.choices->reused();
  return r;
}

absl::StatusOr<CompileResult> Compiler::compile_to_file(
    const ModelSource& model, const CompileOptions& options,
    const std::filesystem::path& artifact_path) const {
  CompileOptions with_artifact = options;
  with_artifact.artifact = true;
  return compile(model, with_artifact, &artifact_path);
}

}  // namespace collage
