// The compile driver: a model (a file, ONNX bytes, or a Graph built in C++) and options in; the
// placed graph, its placement report and the artifact bytes (or file) out. One implementation of
// import -> passes -> placement -> build -> artifact -> report: the `collage` command line and
// the C API (collage.h) are skins over it.
//
//   auto compiler = collage::Compiler::create();            // the built-in backends
//   auto result = compiler->compile_to_file(collage::ModelSource::file("model.onnx"), {},
//                                           "model.collage");
//   std::string report = result->report_json();
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/artifact.h"
#include "collage/backend.h"
#include "collage/backends/native.h"
#include "collage/context.h"
#include "collage/graph.h"
#include "collage/passes.h"
#include "collage/placement.h"
#include "collage/trees.h"

namespace collage {

// ---- Tree strategies ----------------------------------------------------------------------------

// How the strategy of a tree model (and of each ai.onnx.ml tree-ensemble node) is chosen:
// "measured" (the default: every strategy placed and costed at the batch compiled for, the
// cheapest built), "auto" (the fixed rule of pick_tree_strategy) or one strategy ("fused", "ptt",
// "tt", "gemm").
struct TreeStrategyMode {
  bool measured = true;
  TreeStrategy fixed = TreeStrategy::automatic;  // when not measured
};
// InvalidArgument naming `name` for anything else.
absl::StatusOr<TreeStrategyMode> parse_tree_strategy_mode(std::string_view name);

// How a tree model's strategy was chosen, for summaries and reports.
struct TreeStrategyReport {
  std::string node;  // the ONNX node (as import errors name it); empty for a tree-model file
  std::string mode;  // "measured", "auto", or the strategy given
  int64_t batch = 0;
  std::string chosen;                       // the built strategy's label ("fused:auto", "ptt")
  std::vector<TreeStrategyTiming> timings;  // measured mode: one per candidate
  size_t measured = 0;                      // kernels timed while costing the candidates
  size_t cached = 0;  // costs the cost database (or an identical group) answered
  std::string note;   // why the fixed rule was used in measured mode
};

// ---- What is compiled ---------------------------------------------------------------------------

// A model to compile: a file (ONNX, XGBoost JSON or LightGBM text, told apart by content unless
// CompileOptions::import.format says), an ONNX model in memory, or a graph built with
// GraphBuilder on the compiler's context().
class ModelSource {
 public:
  static ModelSource file(std::filesystem::path path);
  // `bytes` is copied. External data is looked up in `base_dir`; with none, a model that refers
  // to external data is refused.
  static ModelSource onnx_bytes(std::span<const uint8_t> bytes,
                                std::filesystem::path base_dir = {});
  static ModelSource graph(Graph graph);

  // The path, "ONNX model in memory (N bytes)" or "graph 'NAME'": reports and messages name it.
  std::string description() const;

 private:
  friend class Compiler;
  struct OnnxBytes {
    std::vector<uint8_t> bytes;
    std::filesystem::path base_dir;
  };
  explicit ModelSource(std::variant<std::filesystem::path, OnnxBytes, Graph> source)
      : source_(std::move(source)) {}
  std::variant<std::filesystem::path, OnnxBytes, Graph> source_;
};

// ---- Dynamic batch -----------------------------------------------------------------------------

// A batch range: the artifact runs any batch from `min` to `max` (an inference server batches
// requests). Each input named in `axes` has its batch at that axis (the other dimensions come from
// ModelImportOptions::onnx.input_shapes or the model); a plan is placed and built for each batch
// of `sizes` and a batch without one runs on the next larger plan, padded with zero rows, which
// the compiler allows only when it proves that the graph keeps batch rows apart (otherwise every
// batch of the range gets a plan, at most kMaxBatchPlans). docs/artifact-format.md, "Dynamic
// batch", says how the runtime picks.
struct BatchRange {
  int64_t min = 0, max = 0;         // max 0: no range; otherwise 1 <= min < max
  std::map<std::string, int> axes;  // batched graph inputs by name: the axis of the range
  // The batches that get a plan, ascending and ending with max; empty: default_batch_sizes. A
  // list that leaves batches out needs a graph that keeps rows apart (an error otherwise).
  std::vector<int64_t> sizes;
};

// min, the powers of two above it and max: 1..32 -> 1 2 4 8 16 32; 3..12 -> 3 4 8 12.
std::vector<int64_t> default_batch_sizes(int64_t min, int64_t max);

// At most this many plans are compiled when a graph mixes rows and each batch needs its own.
inline constexpr int64_t kMaxBatchPlans = 64;

// One batch of a range compiled: the graph placed (after the passes) and its placement.
struct BatchPlan {
  int64_t batch = 0;
  Graph graph;
  OptimizeResult optimized;
};

// The placement options of a compile: generated code (`native`), which runs any operator, takes
// what no other backend does, and placements are scored under the executor measured faster.
PlacementOptions default_compile_placement();

struct CompileOptions {
  // Format and input shapes (ONNX inputs with symbolic dimensions; a tree model's "input" shape
  // sets its batch), tree-graph options.
  ModelImportOptions import;
  // The strategy of a tree model and of each tree-ensemble node of an ONNX model.
  TreeStrategyMode tree_strategy;
  // Run the graph passes (run_passes with `pass_options`) before placement.
  bool passes = true;
  PassOptions pass_options;
  // Strategy, budget, backends, fallback, cost database, threads, executor, progress. A tree
  // model's candidates are costed with the same backends, cost database and threads.
  PlacementOptions placement = default_compile_placement();
  // Build and serialize the artifact. Then no group may go to the reference backend (the runtime
  // has no reference kernels): when `native` is registered it is the fallback and the reference
  // takes no part. false: place only (CompileResult::artifact stays empty).
  bool artifact = true;
  // Told the label of each tree-strategy candidate before it is placed and costed (may be empty).
  std::function<void(const std::string& label)> tree_progress;
  // Told "import" before the model is imported and "build" before the placed groups are built
  // into the artifact (may be empty); the placement's phases go to placement.progress.
  std::function<void(const char* step)> step_progress;
  // A batch range (dynamic batch; batch.max 0: none): the model, a file or ONNX bytes, is
  // imported, placed and built once per batch of the range's list, the time budget shared among
  // them, into one artifact. Needs `artifact`.
  BatchRange batch;
  // Told each batch of the range as it is placed: its index among `count` (may be empty).
  std::function<void(int64_t batch, size_t index, size_t count)> batch_progress;
};

// A model imported (tree strategies chosen) and, with CompileOptions::passes, optimised.
struct ImportedModel {
  Graph graph;
  std::vector<TreeStrategyReport> trees;  // one per tree model or tree-ensemble node
};

struct CompileResult {
  std::string model;       // ModelSource::description()
  bool passes = true;      // whether the passes ran
  Graph graph;             // the graph that was placed (after the passes)
  OptimizeResult optimized;  // the placement, its comparison with the baselines, counts
  std::vector<TreeStrategyReport> trees;  // one per tree model or tree-ensemble node
  // The artifact's bytes; empty without one, and from compile_to_file (which writes them).
  std::string artifact;
  ArtifactSummary summary;                // what the artifact holds
  // With a batch range: the range, each batch's plan (ascending; `graph` and `optimized` above
  // are the largest batch's), whether batches between plans run padded, and why not.
  int64_t batch_min = 0, batch_max = 0;
  std::vector<BatchPlan> batches;
  bool padded = false;
  std::string batch_note;
  // Wall time of each step, in seconds: import (tree strategies included) and passes; the
  // placement, of which the end-to-end comparison with the baselines took `compare_s`; building
  // and serializing the artifact. With a batch range the steps repeat per batch, and placement_s
  // is the whole compile.
  double import_s = 0, placement_s = 0, compare_s = 0, artifact_s = 0;
  // The same in finer steps, in the order they first ran (seconds): "import", "placement"
  // (before the first search phase), "candidates", "measure", "op-level", "graph-level",
  // "compare", "build" (the artifact), "write" (compile_to_file's), as far as each ran. Empty
  // with a batch range.
  std::vector<std::pair<std::string, double>> phases;
  // The steps the time budget cut short: OptimizeResult::cut, then "build: ..." when none of
  // the budget was left to measure the artifact's choices. Empty with a batch range.
  std::vector<std::string> cut;
  // Choices the kernels and the artifact's schedule made by timing alternatives on this machine
  // (MeasuredChoices: Winograd or direct, the wave schedule's profiles and executor), and those
  // found remembered in the cost database instead.
  size_t choices_measured = 0, choices_reused = 0;
  // Kernels of the backends whose builds the compile keeps for reuse (KernelShelf: openvino's
  // regions): built (compiled, or read from the region cache) and kept, of them by the artifact
  // build (neither measured nor evaluated before), and builds that took a kept one instead.
  size_t kernels_built = 0, kernels_built_by_build = 0, kernels_reused = 0;
  // The kernels built in each step by each backend and the wall time their builds took:
  // OptimizeResult::builds, then the artifact build's (step "build"). Empty with a batch range.
  std::vector<KernelBuilds> builds;

  // The placement report as JSON: Placement::to_json's "groups" and "notes", then "model",
  // "passes", "candidates", "measured", "cached", "evaluations", "choices_measured",
  // "choices_reused", "kernels_built", "kernels_built_by_build", "kernels_reused", "phases_s" ({step: seconds}),
  // "builds_s" ({step: {backend: [builds, seconds]}}), "compared" ([{"strategy", "ms", "note"}]) and, when trees were compiled, "tree_strategies" ([{"node", "mode", "batch",
  // "chosen", "kernels_measured", "costs_reused", "note", "candidates": [{"strategy", "ms" (-1:
  // skipped), "skipped" (why)}]}]); with a batch range, "batch_min", "batch_max", "padded",
  // "note" and "batches" ([{"batch", "placement" (Placement::to_json)}]). `collage explain`
  // renders it.
  std::string report_json() const;
};

// ---- The compiler -------------------------------------------------------------------------------

// The graph-level search's score of a placement under the wave executor (waves, or automatic: the
// faster of waves and sequential), as its artifact would run: kernels built and profiled, wave
// scheduled, both executors measured over `runs` whole runs (median; at most, as the runs stop
// after three of each once they took `max_ms` of wall time). `ctx` is borrowed and must
// outlive the function. compile() uses it unless CompileOptions::placement.executor_latency is
// set.
ExecutorLatency artifact_executor_latency(const Context& ctx, int runs = 7, double max_ms = 1000);

// Registers the built-in backends in priority order (the `greedy` baseline's): dnnl, eigen,
// trees, native (with `native`'s options), dynamic (nodes whose shapes depend on data), openvino
// where this build has it (otherwise the registry records why it is unavailable), then
// reference. AlreadyExists when a name is taken.
absl::Status register_builtin_backends(BackendRegistry& registry,
                                       const NativeBackendOptions& native = {});

struct CompilerOptions {
  // Register the built-in backends (register_builtin_backends); false: the registry starts empty
  // and the caller adds every backend, a fallback that runs any node included.
  bool builtin_backends = true;
  NativeBackendOptions native;
};

// A context (the operator registry) and the backends taking part. Movable; a compile does not
// change it, so several compiles may run on one compiler at once, but not alongside a change to
// its operators or backends.
class Compiler {
 public:
  static absl::StatusOr<Compiler> create(CompilerOptions options = {});

  // Operators: add custom ones here, and build graphs for ModelSource::graph on this context.
  Context& context() { return *ctx_; }
  const Context& context() const { return *ctx_; }
  // Backends: add your own (BackendRegistry::add; registration order is priority order).
  BackendRegistry& backends() { return *backends_; }
  const BackendRegistry& backends() const { return *backends_; }
  // Loads a backend plugin (include/collage/backend_plugin.h) and registers it; errors name the
  // path.
  absl::Status load_plugin(const std::filesystem::path& path);

  // Imports `model` (a tree model's strategy, and each tree-ensemble node's, chosen as
  // options.tree_strategy says, its candidates costed with options.placement) and runs the
  // passes: the graph compile() places. Errors are the importer's and the passes'.
  absl::StatusOr<ImportedModel> import_model(const ModelSource& model,
                                             const CompileOptions& options = {}) const;
  // Imports `model`, runs the passes, places the graph and, with options.artifact, builds and
  // serializes the artifact. Errors name the model file, node, group or backend at fault:
  // InvalidArgument for bad input (a malformed model, an unknown strategy or backend, a group an
  // artifact cannot hold), NotFound for a missing file, Unimplemented for what collage does not
  // handle.
  absl::StatusOr<CompileResult> compile(const ModelSource& model,
                                        const CompileOptions& options = {}) const;
  // compile(), with the artifact written to `artifact_path` atomically (a failed write never
  // leaves a partial file) instead of returned: CompileResult::artifact stays empty (the write
  // goes from the model's constants to disk, with no copy of the whole file in memory), and the
  // "write" step of CompileResult::phases times it. options.artifact is taken as true.
  absl::StatusOr<CompileResult> compile_to_file(const ModelSource& model,
                                                const CompileOptions& options,
                                                const std::filesystem::path& artifact_path) const;

 private:
  Compiler();
  // The placement options of a compile with `options`.
  PlacementOptions placement_options(const CompileOptions& options) const;
  // compile() of a batch range: a plan per batch, one artifact.
  absl::StatusOr<CompileResult> compile_batch(const ModelSource& model,
                                              const CompileOptions& options) const;
  // compile(); with `artifact_path` non-null, the artifact is written there instead of returned.
  absl::StatusOr<CompileResult> compile(const ModelSource& model, const CompileOptions& options,
                                        const std::filesystem::path* artifact_path) const;
  // import_model without the passes.
  absl::StatusOr<ImportedModel> import(const ModelSource& model, const CompileOptions& options,
                                       const PlacementOptions& placement) const;

  std::unique_ptr<Context> ctx_;
  std::unique_ptr<BackendRegistry> backends_;
};

}  // namespace collage
