// `collage tune MODEL --budget S --log PATH`: tunes the schedule of every distinct conv and dense
// operator signature of a model by measurement, appending the best configurations to a tuning log
// that the native backend reads on the next compile.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "cli_common.h"
#include "collage/target.h"
#include "collage/context.h"
#include "collage/placement.h"
#include "collage/thread_pool.h"
#include "te_ops/conv_dense_templates.h"
#include "tune/tuner.h"
#include "collage/tuning_log.h"

namespace collage::cli {
namespace {

std::string default_log_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/collage/tuning-log.jsonl";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/collage/tuning-log.jsonl";
  return "tuning-log.jsonl";
}

int run_tune(std::span<const std::string> args) {
  ArgParser parser("tune",
                   "Tune the generated-code schedules of a model's Conv, MatMul and Gemm\n"
                   "operators by measurement, recording the best configuration of each distinct\n"
                   "operator signature in a tuning log.");
  ModelArgs model;
  model.declare(parser);
  std::string budget_text = "60", log_path, target_name;
  int64_t threads = 2, seed = 1;
  bool retune = false;
  parser.option("--budget", "SECONDS", "total tuning time (default 60), shared by the tasks",
                &budget_text);
  parser.option("--log", "PATH",
                "the tuning log (default $XDG_CACHE_HOME/collage/tuning-log.jsonl, else "
                "~/.cache/collage/tuning-log.jsonl)",
                &log_path);
  parser.option("--threads", "N", "threads the kernels run on (default 2)", &threads, 1);
  parser.option("--seed", "N", "seed of the search (default 1)", &seed, 0);
  parser.flag("--retune", "tune signatures the log already has as well", &retune);
  parser.option("--target", "CPU",
                "the x86-64 CPU the kernels are compiled for: host (default), avx2,\n"
                "avx512 or a CPU LLVM knows (as for compile); records are kept per target",
                &target_name);
  double budget = 0;
  codegen::TargetSpec target = codegen::TargetSpec::host();
  parser.check([&]() -> std::optional<std::string> {
    if (!target_name.empty() && target_name != "host") {
      absl::StatusOr<codegen::TargetSpec> t = codegen::TargetSpec::named(target_name);
      if (t.ok())
        if (absl::Status s = t->runs_on(target); !s.ok()) t = s;
      if (!t.ok()) return "--target: " + std::string(t.status().message());
      target = *t;
    }
    char* end = nullptr;
    budget = std::strtod(budget_text.c_str(), &end);
    if (end == budget_text.c_str() || *end != '\0' || !(budget > 0))
      return "--budget must be a positive number of seconds, got '" + budget_text + "'";
    return std::nullopt;
  });
  parser.epilog(
      "Progress goes to stderr: tasks done/total and the best GFLOP/s of the current task.\n"
      "Records are keyed by this machine's fingerprint and the operator signature (op,\n"
      "attributes, shapes, dtypes, target CPU); torn or corrupt lines of an existing log are\n"
      "skipped with a warning.");
  if (std::optional<int> exit = parser.parse(args)) return *exit;
  if (log_path.empty()) log_path = default_log_path();

  Context ctx;
  absl::StatusOr<Graph> g = load_model(ctx, model);
  if (!g.ok()) return report_failure("tune", g.status());
  absl::StatusOr<std::string> device = device_fingerprint();
  if (!device.ok()) return report_failure("tune", device.status());
  std::vector<std::string> warnings;
  absl::StatusOr<tune::TuningLog> log = tune::TuningLog::load(log_path, *device, &warnings);
  if (!log.ok()) return report_failure("tune", log.status());
  for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());

  std::vector<std::string> skipped;
  std::vector<te_ops::TuningTask> tasks =
      te_ops::conv_dense_tuning_tasks(*g, target, static_cast<int>(threads), &skipped);
  for (const std::string& s : skipped) std::fprintf(stderr, "skipped %s\n", s.c_str());
  std::vector<te_ops::TuningTask*> todo;
  for (te_ops::TuningTask& t : tasks)
    if (retune || !log->best(t.schedule.signature)) todo.push_back(&t);
  std::printf("%s: %zu conv/dense signatures, %zu to tune for %s, budget %.1f s, log %s\n",
              model.model.c_str(), tasks.size(), todo.size(), target.to_string().c_str(), budget,
              log_path.c_str());

  ThreadPool pool(static_cast<int>(threads));
  double spent = 0, default_total = 0, tuned_total = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    te_ops::TuningTask& task = *todo[i];
    // What is left of the budget, shared by the tasks that are left, weighted by their work.
    double work_left = 0;
    for (size_t j = i; j < todo.size(); ++j) work_left += todo[j]->schedule.flops * todo[j]->nodes;
    tune::SearchOptions so;
    so.seed = static_cast<uint64_t>(seed);
    so.budget_s = std::max(0.0, budget - spent) * task.schedule.flops * task.nodes /
                  std::max(work_left, 1.0);
    const double gflop = task.schedule.flops / 1e9;
    auto progress = [&](int trials, double best_ms) {
      std::fprintf(stderr, "\rtune: task %zu/%zu %-10.10s trial %3d, best %7.1f GFLOP/s  ", i + 1,
                   todo.size(), task.node.c_str(), trials, best_ms > 0 ? gflop / best_ms * 1e3 : 0);
      std::fflush(stderr);
    };
    tune::SearchResult r = tune::search(
        task.schedule, tune::jit_measurer(task.group, task.schedule, &pool), so, progress);
    spent += r.seconds;
    std::fprintf(stderr, "\n");
    if (r.best_ms <= 0) {
      std::fprintf(stderr, "tune: %s: no configuration ran\n", task.schedule.signature.c_str());
      continue;
    }
    default_total += r.default_ms * task.nodes;
    tuned_total += r.best_ms * task.nodes;
    tune::TuningRecord rec{*device, task.schedule.signature, r.best, r.best_ms,
                           gflop / r.best_ms * 1e3};
    if (absl::Status s = tune::append_record(log_path, rec); !s.ok())
      return report_failure("tune", s);
    std::printf("  %-24s x%d  %8.3f ms -> %8.3f ms  %7.1f GFLOP/s  (%d trials, %.1f s)  %s\n",
                task.node.c_str(), task.nodes, r.default_ms, r.best_ms, rec.gflops, r.trials,
                r.seconds, tune::to_string(r.best).c_str());
  }
  std::printf("tuned %zu signatures in %.1f s; conv/dense time per inference %.3f ms -> %.3f ms\n",
              todo.size(), spent, default_total, tuned_total);
  return kExitOk;
}

}  // namespace

extern const Command kTuneCommand;
const Command kTuneCommand{"tune", "tune conv/dense schedules of a model into a tuning log",
                           run_tune};

}  // namespace collage::cli
