// Whole-model benchmark: each model placed by every strategy (single:dnnl, single:eigen, greedy,
// two-level, and single:native when a backend of that name is registered) and run in process,
// alternated round by round with ONNX Runtime (CPU, 2 threads, in a child process that times
// itself, bench/models/ort_server.py). Prints each contender's median latency, its ratio to
// ONNX Runtime, its largest error against ONNX Runtime's reference outputs, and the speedup of
// two-level over the best single backend. Never fails on a timing.
//
//   model_bench [--small] [--models a,b] [--rounds N] [--repeat N] [--budget S] [--cost-db PATH]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench_util.h"
#include "cli_args.h"
#include "cli_common.h"
#include "collage/executor.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/thread_pool.h"
#include "openmp_wait.h"
#include "placement_cli.h"

namespace collage::bench {
namespace {

namespace fs = std::filesystem;
using cli::ArgParser;

struct Args {
  bool small = false;
  std::string models;
  int64_t rounds = 5, repeat = 3;
  std::string budget = "60";
  std::string cost_db;
  std::string python = std::string(COLLAGE_SOURCE_DIR) + "/.venv/bin/python";
};

// A contender's timings and accuracy.
struct Row {
  std::string name;
  std::vector<double> ms;
  double error = -1;     // max |collage - ort| / max |ort| over the outputs; < 0: not measured
  std::string note;      // why it did not run, or the placement's size
  bool single = false;   // a single-backend placement
};

// Places, compiles and checks one strategy; nullopt (with the row's note) when it cannot run.
std::optional<CompiledModel> prepare(const Context& ctx, const BackendRegistry& backends,
                                     const Graph& g, const Args& args, double budget_s,
                                     ThreadPool& pool, const std::vector<Tensor>& inputs,
                                     const std::vector<Tensor>& expected, Row& row) {
  PlacementOptions o;
  o.strategy = row.name;
  // As BYOC does: what a single backend leaves goes to generated code when it is built in.
  if (backends.find("native")) o.fallback = "native";
  o.time_budget_s = budget_s;
  o.cost_db_path = args.cost_db.empty() ? cli::default_cost_db_path() : args.cost_db;
  const double start = now_ms();
  auto placement = optimize(ctx, backends, g, o);
  if (!placement.ok()) {
    row.note = std::string(placement.status().message());
    return std::nullopt;
  }
  BuildOptions build;
  build.num_threads = pool.num_threads();
  auto model = compile_placement(ctx, backends, g, *placement, build, &pool);
  if (!model.ok()) {
    row.note = std::string(model.status().message());
    return std::nullopt;
  }
  row.note = absl::StrFormat("%d groups, placed in %.1f s", placement->groups.size(),
                             (now_ms() - start) / 1000);
  auto outputs = model->run(inputs);
  if (!outputs.ok()) {
    row.note = std::string(outputs.status().message());
    return std::nullopt;
  }
  row.error = 0;
  for (size_t i = 0; i < outputs->size() && i < expected.size(); ++i)
    row.error = std::max(row.error, scaled_error((*outputs)[i], expected[i]));
  return std::move(*model);
}

void bench_model(const std::string& name, const Args& args, double budget_s,
                 const BackendRegistry& backends) {
  const fs::path cache = model_cache();
  const fs::path model = cache / (name + ".onnx");
  Context ctx;
  std::optional<CachedModel> loaded = load_cached_model(ctx, name);
  if (!loaded) return;
  const Graph& g = loaded->graph;
  const std::vector<Tensor>& inputs = loaded->inputs;
  const std::vector<Tensor>& expected = loaded->expected;

  std::vector<std::string> strategies = {"single:dnnl", "single:eigen"};
  if (backends.find("native")) strategies.push_back("single:native");
  strategies.insert(strategies.end(), {"greedy", "two-level"});
  // One pool for every contender, as an application has: idle pools of the others would take
  // threads from the one running.
  ThreadPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  std::vector<Row> rows;
  std::vector<std::optional<CompiledModel>> models;
  for (const std::string& s : strategies) {
    Row row;
    row.name = s;
    row.single = s.starts_with("single:");
    std::fprintf(stderr, "%s: placing %s\n", name.c_str(), s.c_str());
    models.push_back(prepare(ctx, backends, g, args, budget_s, pool, inputs, expected, row));
    rows.push_back(std::move(row));
  }
  std::string ort_error;
  std::optional<OrtProcess> ort =
      OrtProcess::start(args.python, model, cache / (name + ".inputs.npz"), 2, &ort_error);
  Row ort_row;
  ort_row.name = "onnxruntime";
  ort_row.note = ort ? "2 threads, all graph optimisations" : ort_error;

  // Rounds: each contender runs `repeat` times in turn, the order rotating, so that drift on a
  // shared machine affects them alike. One untimed run each first.
  for (auto& m : models)
    if (m) (void)m->run(inputs);
  if (ort) (void)ort->time(1);
  const size_t n = rows.size() + 1;
  for (int64_t r = 0; r < args.rounds; ++r) {
    for (size_t k = 0; k < n; ++k) {
      const size_t c = (k + static_cast<size_t>(r)) % n;
      if (c == rows.size()) {
        if (ort) {
          std::vector<double> ms = ort->time(args.repeat);
          ort_row.ms.insert(ort_row.ms.end(), ms.begin(), ms.end());
          // ONNX Runtime's intra-op threads spin for a while after its last run, on the cores the
          // next contender needs (that one measured up to 1.7x slower): let them go to sleep.
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        continue;
      }
      if (!models[c]) continue;
      for (int64_t i = 0; i < args.repeat; ++i) {
        const double t0 = now_ms();
        auto out = models[c]->run(inputs);
        const double t1 = now_ms();
        if (out.ok()) rows[c].ms.push_back(t1 - t0);
      }
    }
  }

  const double ort_ms = median(ort_row.ms);
  cli::TextTable t({false, true, true, true, false});
  t.add({"placement", "median ms", "vs ORT", "max err", ""});
  const Row* best_single = nullptr;
  const Row* two_level = nullptr;
  for (const Row& row : rows) {
    const double ms = median(row.ms);
    if (row.single && !row.ms.empty() && (!best_single || ms < median(best_single->ms)))
      best_single = &row;
    if (row.name == "two-level" && !row.ms.empty()) two_level = &row;
    t.add({row.name, row.ms.empty() ? "-" : absl::StrFormat("%.3f", ms),
           row.ms.empty() || ort_row.ms.empty() ? "" : absl::StrFormat("%.2fx", ms / ort_ms),
           row.error < 0 ? "-" : absl::StrFormat("%.1e", row.error), row.note});
  }
  t.add({ort_row.name, ort_row.ms.empty() ? "-" : absl::StrFormat("%.3f", ort_ms),
         ort_row.ms.empty() ? "" : "1.00x", "", ort_row.note});
  std::string out = absl::StrFormat(
      "%s: %d nodes, %d rounds x %d runs each (alternating), vs ORT = collage / ONNX Runtime, "
      "max err = max|collage - ort| / max|ort|\n",
      name, g.nodes().size(), args.rounds, args.repeat);
  out += t.render(2);
  if (best_single && two_level)
    out += absl::StrFormat("  two-level vs the best single backend (%s): %.2fx faster\n",
                           best_single->name, median(best_single->ms) / median(two_level->ms));
  std::printf("%s\n", out.c_str());
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  Args args;
  ArgParser parser("model_bench",
                   "Times each model under every placement strategy, alternating with ONNX "
                   "Runtime\n(CPU, 2 threads) in one run; prints medians, ratios, errors and the "
                   "speedup of\ntwo-level over the best single backend.");
  parser.flag("--small", "the width-reduced *_small models (a quick check)", &args.small);
  parser.option("--models", "LIST",
                "comma-separated model names (default: resnet50, mobilenetv2, resnext50,\n"
                "bert, dcgan, googlenet; with --small their _small variants)",
                &args.models);
  parser.option("--rounds", "N", "rounds (default 5)", &args.rounds, 1);
  parser.option("--repeat", "N", "timed runs of each contender per round (default 3)",
                &args.repeat, 1);
  parser.option("--budget", "SECONDS", "two-level search budget per model (default 60)",
                &args.budget);
  parser.option("--cost-db", "PATH", "cost database (default: the CLI's)", &args.cost_db);
  parser.option("--python", "PATH", "the Python with onnxruntime (default: the checkout's .venv)",
                &args.python);
  std::vector<std::string> raw(argv + 1, argv + argc);
  if (std::optional<int> exit = parser.parse(raw)) return *exit;
  const std::optional<double> budget_s = parse_seconds(args.budget);
  if (!budget_s) return parser.usage_error("--budget expects a number of seconds");

  std::vector<std::string> models = split_list(args.models);
  if (models.empty()) {
    models = {"resnet50", "mobilenetv2", "resnext50", "bert", "dcgan", "googlenet"};
    if (args.small)
      for (std::string& m : models) m += "_small";
  }
  BackendRegistry backends;
  if (absl::Status s = register_builtin_backends(backends); !s.ok()) {
    std::fprintf(stderr, "model_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  for (const std::string& m : models) bench_model(m, args, *budget_s, backends);
  return 0;
}

}  // namespace
}  // namespace collage::bench

int main(int argc, char** argv) {
  // oneDNN's OpenMP workers must not spin on the cores the other backends' thread pool needs.
  collage::cli::use_passive_openmp_wait(argv);
  return collage::bench::run(argc, argv);
}
