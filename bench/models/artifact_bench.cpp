// Artifact benchmark: one two-level placement per model, run in process (compile_placement) and
// as an artifact through the runtime's C API (what `collage compile -o` writes and `collage run`
// runs), alternated round by round with ONNX Runtime in one run; prints the medians, the ratio
// artifact / in process and the errors against ONNX Runtime's reference outputs. With --kernels N
// it also times every kernel of the placement both ways (N runs each: in process one kernel at a
// time on the model's real data, the artifact through the runtime's profiler) and lists the
// kernels whose times differ most. "cpu ms" is the CPU time of all the threads of the contender's
// process per run (ONNX Runtime's in its own),
// "waits" the times one of them blocked (voluntary context switches) per run. Never fails on a
// timing.
//
//   artifact_bench [--models a,b] [--rounds N] [--repeat N] [--budget S] [--cost-db PATH]
//                  [--kernels N] [--executor KIND] [--threads N] [--no-ort]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "artifact/artifact.h"
#include "artifact_runner.h"
#include "bench_util.h"
#include "cli_args.h"
#include "cli_common.h"
#include "collage/compiler.h"
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
  std::string models = "resnet50,mobilenetv2";
  int64_t rounds = 5, repeat = 3, kernels = 0, threads = 0;
  std::string budget = "60";
  std::string cost_db;
  std::string executor;  // the artifact's executor; empty: its default
  bool no_ort = false;
  std::string python = std::string(COLLAGE_SOURCE_DIR) + "/.venv/bin/python";
};

// Times this process's threads gave up the core to wait (blocking on a lock, a condition
// variable or I/O), so far.
double process_waits() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_nvcsw);
}

double max_error(const absl::StatusOr<std::vector<Tensor>>& out,
                 const std::vector<Tensor>& expected) {
  if (!out.ok()) return INFINITY;
  double e = 0;
  for (size_t i = 0; i < out->size() && i < expected.size(); ++i)
    e = std::max(e, scaled_error((*out)[i], expected[i]));
  return e;
}

// Each kernel's median time in process: the kernels run one at a time, in order, over tensors
// holding the model's values (so every kernel reads real data), their tasks spread over `pool`.
absl::StatusOr<std::vector<double>> kernel_times_in_process(
    const Graph& g, const std::vector<ArtifactKernel>& kernels, const std::vector<Tensor>& inputs,
    ThreadPool& pool, int64_t runs) {
  std::vector<Tensor> values(g.values().size());
  for (size_t i = 0; i < g.inputs().size(); ++i) values[g.inputs()[i]] = inputs[i];
  std::vector<std::vector<void*>> args(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (ValueId v : kernels[k].args) {
      if (values[v].empty()) {
        const Tensor* c = g.constant_of(v);
        values[v] = c ? *c : Tensor(g.value(v).type.dtype, g.value(v).type.shape);
      }
      args[k].push_back(values[v].raw());
    }
  }
  std::vector<std::vector<double>> ms(kernels.size());
  for (int64_t r = 0; r <= runs; ++r) {  // run 0 is a warm-up
    for (size_t k = 0; k < kernels.size(); ++k) {
      Kernel& kernel = *kernels[k].kernel;
      absl::Status first;
      std::mutex mu;
      const double t0 = now_ms();
      pool.parallel_for(kernel.task_count(), [&](int64_t t) {
        absl::Status s = kernel.run_task(args[k].data(), static_cast<int32_t>(t));
        std::lock_guard<std::mutex> lock(mu);
        if (first.ok()) first = s;
      });
      const double t1 = now_ms();
      if (!first.ok()) return first;
      if (r > 0) ms[k].push_back(t1 - t0);
    }
  }
  std::vector<double> out;
  for (auto& m : ms) out.push_back(median(m));
  return out;
}

// Each kernel's median time in the artifact's runs, from the runtime's profile.
absl::StatusOr<std::vector<double>> kernel_times_in_artifact(const cli::ArtifactRunner& runner,
                                                             const std::vector<Tensor>& inputs,
                                                             size_t num_kernels, int64_t runs,
                                                             const fs::path& profile) {
  if (absl::Status s = runner.set_profiling(true); !s.ok()) return s;
  for (int64_t r = 0; r < runs; ++r)
    if (auto out = runner.run(inputs); !out.ok()) return out.status();
  if (absl::Status s = runner.write_profile(profile.string()); !s.ok()) return s;
  if (absl::Status s = runner.set_profiling(false); !s.ok()) return s;
  std::ifstream f(profile);
  const nlohmann::json trace = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (trace.is_discarded())
    return absl::DataLossError("the runtime's profile " + profile.string() + " is not JSON");
  std::vector<std::vector<double>> ms(num_kernels);
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (!e.contains("args")) continue;  // a whole run
    const size_t k = e["args"]["kernel"].get<size_t>();
    if (k < num_kernels) ms[k].push_back(e["dur"].get<double>() / 1000);
  }
  std::vector<double> out;
  for (auto& m : ms) out.push_back(median(m));
  return out;
}

void print_kernel_table(const std::vector<ArtifactKernel>& kernels,
                        const std::vector<double>& in_process,
                        const std::vector<double>& artifact) {
  std::map<std::string, std::pair<double, double>> by_backend;
  std::vector<size_t> order(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    order[k] = k;
    by_backend[kernels[k].backend].first += in_process[k];
    by_backend[kernels[k].backend].second += artifact[k];
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::fabs(artifact[a] - in_process[a]) > std::fabs(artifact[b] - in_process[b]);
  });
  cli::TextTable t({true, false, false, true, true, true});
  t.add({"kernel", "backend", "nodes", "in process ms", "artifact ms", "artifact / in process"});
  for (size_t i = 0; i < order.size() && i < 12; ++i) {
    const size_t k = order[i];
    t.add({std::to_string(k), kernels[k].backend, kernels[k].name.substr(0, 48),
           absl::StrFormat("%.3f", in_process[k]), absl::StrFormat("%.3f", artifact[k]),
           absl::StrFormat("%.2f", artifact[k] / in_process[k])});
  }
  for (const auto& [backend, sums] : by_backend)
    t.add({"sum", backend, "", absl::StrFormat("%.3f", sums.first),
           absl::StrFormat("%.3f", sums.second),
           absl::StrFormat("%.2f", sums.second / sums.first)});
  std::printf("  per kernel (the 12 that differ most, then the sums by backend):\n%s",
              t.render(4).c_str());
}

// False when the model could not be loaded, placed or compiled (printed with the reason).
bool bench_model(const std::string& name, const Args& args, double budget_s) {
  const fs::path cache = model_cache();
  const fs::path model = cache / (name + ".onnx");
  auto compiler = Compiler::create();
  if (!compiler.ok()) {
    std::printf("%s: %s\n\n", name.c_str(), std::string(compiler.status().message()).c_str());
    return false;
  }
  const Context& ctx = compiler->context();
  std::optional<CachedModel> loaded = load_cached_model(ctx, name);
  if (!loaded) return false;
  const Graph& g = loaded->graph;
  const std::vector<Tensor>& inputs = loaded->inputs;
  const std::vector<Tensor>& expected = loaded->expected;

  // The placement `collage compile -o` makes (the same options, so that a search remembered in
  // the cost database is reused): two-level, the generated-code backend in the reference
  // fallback's place, the executor chosen by measurement.
  const int threads = args.threads > 0
                          ? static_cast<int>(args.threads)
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cli::PlacementArgs placement_args;
  placement_args.budget_s = budget_s;
  placement_args.cost_db = args.cost_db;
  CompileOptions options;
  options.passes = false;  // load_cached_model ran them
  options.placement = placement_args.options();
  options.placement.num_threads = threads;
  const fs::path file =
      fs::temp_directory_path() / absl::StrFormat("artifact_bench-%d-%s.collage", getpid(), name);
  std::fprintf(stderr, "%s: placing two-level\n", name.c_str());
  auto compiled = compiler->compile_to_file(ModelSource::graph(g), options, file);
  if (!compiled.ok()) {
    std::printf("%s: %s\n\n", name.c_str(), std::string(compiled.status().message()).c_str());
    return false;
  }
  const Placement* placement = &compiled->optimized.placement;
  const BackendRegistry& backends = compiler->backends();
  ThreadPool pool(threads);
  BuildOptions build;
  build.num_threads = threads;
  auto in_process = compile_placement(ctx, backends, g, *placement, build, &pool);
  const ArtifactSummary* summary = &compiled->summary;
  absl::StatusOr<cli::ArtifactRunner> artifact =
      cli::ArtifactRunner::load(file.string(), args.executor, threads);
  if (!in_process.ok() || !artifact.ok()) {
    std::printf(
        "%s: %s\n\n", name.c_str(),
        std::string((in_process.ok() ? artifact.status() : in_process.status()).message()).c_str());
    fs::remove(file);
    return false;
  }

  std::optional<PeerProcess> ort;
  std::string ort_note = "not run (--no-ort)";
  if (!args.no_ort) {
    ort = PeerProcess::start(args.python, "onnxruntime", model, cache / (name + ".inputs.npz"),
                             threads, {}, &ort_note);
    if (ort) ort_note = absl::StrFormat("%d threads, all graph optimisations", threads);
  }

  const double in_process_error = max_error(in_process->run(inputs), expected);
  const double artifact_error = max_error(artifact->run(inputs), expected);
  if (ort) (void)ort->time(1);
  std::vector<double> ms[3];      // in process, artifact, ONNX Runtime
  std::vector<double> cpu_ms[3];  // CPU time of the contender's process's threads per run
  std::vector<double> waits[2];   // times a thread of this process blocked, per run
  for (int64_t r = 0; r < args.rounds; ++r) {
    for (int k = 0; k < 3; ++k) {
      const int c = static_cast<int>((k + r) % 3);
      if (c == 2) {
        if (!ort) continue;
        PeerProcess::Times t = ort->time(args.repeat);
        ms[2].insert(ms[2].end(), t.wall.begin(), t.wall.end());
        cpu_ms[2].insert(cpu_ms[2].end(), t.cpu.begin(), t.cpu.end());
        // ONNX Runtime's intra-op threads spin for a while after its last run, on the cores the
        // next contender needs: let them go to sleep.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      for (int64_t i = 0; i < args.repeat; ++i) {
        const double w0 = process_waits(), c0 = process_cpu_ms(), t0 = now_ms();
        const bool ok = c == 0 ? in_process->run(inputs).ok() : artifact->run(inputs).ok();
        const double t1 = now_ms(), c1 = process_cpu_ms(), w1 = process_waits();
        if (!ok) continue;
        ms[c].push_back(t1 - t0);
        cpu_ms[c].push_back(c1 - c0);
        waits[c].push_back(w1 - w0);
      }
    }
  }

  const double ort_ms = median(ms[2]);
  auto vs_ort = [&](double v) {
    return ms[2].empty() ? std::string() : absl::StrFormat("%.2fx", v / ort_ms);
  };
  cli::TextTable t({false, true, true, true, true, true, false});
  t.add({"contender", "median ms", "cpu ms", "waits", "vs ORT", "max err", ""});
  t.add({"in process", absl::StrFormat("%.3f", median(ms[0])),
         absl::StrFormat("%.3f", median(cpu_ms[0])), absl::StrFormat("%.0f", median(waits[0])),
         vs_ort(median(ms[0])), absl::StrFormat("%.1e", in_process_error),
         absl::StrFormat("%d groups, compile_placement", placement->groups.size())});
  t.add({"artifact", absl::StrFormat("%.3f", median(ms[1])),
         absl::StrFormat("%.3f", median(cpu_ms[1])), absl::StrFormat("%.0f", median(waits[1])),
         vs_ort(median(ms[1])), absl::StrFormat("%.1e", artifact_error),
         absl::StrFormat("%s executor, %s", artifact->executor_stats().executor,
                         cli::human_bytes(static_cast<int64_t>(summary->file_bytes)))});
  t.add({"onnxruntime", ms[2].empty() ? "-" : absl::StrFormat("%.3f", ort_ms),
         cpu_ms[2].empty() ? "" : absl::StrFormat("%.3f", median(cpu_ms[2])), "",
         ms[2].empty() ? "" : "1.00x", "", ort_note});
  std::fputs(absl::StrFormat("%s: two-level placement, %d rounds x %d runs each (alternating), "
                             "%d threads\n%s  artifact / in process = %.3f\n",
                             name, args.rounds, args.repeat, threads, t.render(2),
                             median(ms[1]) / median(ms[0]))
                 .c_str(),
             stdout);

  if (args.kernels > 0) {
    auto kernels = build_artifact_kernels(ctx, backends, g, *placement, build);
    absl::StatusOr<std::vector<double>> in_k =
        kernels.ok() ? kernel_times_in_process(g, *kernels, inputs, pool, args.kernels)
                     : kernels.status();
    const fs::path profile = fs::path(file).replace_extension(".trace.json");
    absl::StatusOr<std::vector<double>> art_k =
        in_k.ok()
            ? kernel_times_in_artifact(*artifact, inputs, kernels->size(), args.kernels, profile)
            : in_k.status();
    fs::remove(profile);
    if (art_k.ok())
      print_kernel_table(*kernels, *in_k, *art_k);
    else
      std::printf("  per kernel: %s\n", std::string(art_k.status().message()).c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
  fs::remove(file);
  return true;
}

int run(int argc, char** argv) {
  Args args;
  ArgParser parser("artifact_bench",
                   "Times each model's two-level placement in process and as an artifact run by "
                   "the\nruntime, alternating with ONNX Runtime in one run; prints medians and "
                   "ratios.");
  parser.option("--models", "LIST", "comma-separated model names (default resnet50,mobilenetv2)",
                &args.models);
  parser.option("--rounds", "N", "rounds (default 5)", &args.rounds, 1);
  parser.option("--repeat", "N", "timed runs of each contender per round (default 3)", &args.repeat,
                1);
  parser.option("--budget", "SECONDS", "two-level search budget per model (default 60)",
                &args.budget);
  parser.option("--cost-db", "PATH", "cost database (default: the CLI's)", &args.cost_db);
  parser.option("--kernels", "N",
                "also time every kernel both ways over N runs and list the ones that differ most",
                &args.kernels, 0);
  parser.option("--executor", "KIND",
                "run the artifact with the waves or the sequential executor (default: the one\n"
                "chosen when it was written)",
                &args.executor);
  parser.option("--threads", "N", "threads of every contender (default: one per core)",
                &args.threads, 0);
  parser.flag("--no-ort", "leave ONNX Runtime out", &args.no_ort);
  parser.option("--python", "PATH", "the Python with onnxruntime (default: the checkout's .venv)",
                &args.python);
  std::vector<std::string> raw(argv + 1, argv + argc);
  if (std::optional<int> exit = parser.parse(raw)) return *exit;
  const std::optional<double> budget_s = parse_seconds(args.budget);
  if (!budget_s) return parser.usage_error("--budget expects a number of seconds");
  int failed = 0;
  for (const std::string& m : split_list(args.models)) {
    if (!bench_model(m, args, *budget_s)) ++failed;
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace collage::bench

int main(int argc, char** argv) {
  // oneDNN's OpenMP workers must not spin on the cores the other backends' threads need.
  collage::cli::use_passive_openmp_wait(argv);
  return collage::bench::run(argc, argv);
}
