// The compiler with its plugins, placement options, the default cost database and the progress
// line.
#include "placement_cli.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_format.h"
#include "core/str_cat.h"
#include "placement/timing.h"

namespace collage::cli {

absl::StatusOr<Compiler> make_compiler(const std::vector<std::string>& plugins,
                                       NativeWinograd winograd) {
  CompilerOptions options;
  options.native.winograd = winograd;
  auto compiler = Compiler::create(std::move(options));
  if (!compiler.ok()) return compiler.status();
  for (const std::string& path : plugins)
    if (absl::Status s = compiler->load_plugin(path); !s.ok()) return s;
  return compiler;
}

std::string default_cost_db_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return str_cat(xdg, "/collage/cost-db.jsonl");
  if (const char* home = std::getenv("HOME"); home && *home)
    return str_cat(home, "/.cache/collage/cost-db.jsonl");
  return "";
}

void PlacementArgs::declare(ArgParser& parser, bool with_strategy, std::string_view seed_option) {
  if (with_strategy)
    parser.option("--placement", "STRATEGY",
                  "two-level (default), op-level, greedy or single:NAME (e.g. single:dnnl)",
                  &strategy);
  parser.option("--budget", "SECONDS",
                str_cat("time budget: compile: of the whole compile (candidate measurement, the\n"
                        "graph-level search, the comparison and building the artifact); run: of\n"
                        "the placement (default ", budget, ")"), &budget);
  parser.option(seed_option, "N", "seed of the graph-level search (default 0)", &seed, 0);
  parser.option("--cost-db", "PATH",
                "cost database (default $XDG_CACHE_HOME/collage/cost-db.jsonl or\n"
                "~/.cache/collage/cost-db.jsonl)",
                &cost_db);
  parser.flag("--no-cost-db", "measure everything again and keep nothing", &no_cost_db);
  parser.option("--backends", "LIST",
                "comma-separated backends that may take part (default: all; the\n"
                "native fallback always takes part)",
                &backends);
  parser.repeated("--plugin", "LIB.so",
                  "load a backend plugin (the C ABI of include/collage/backend_plugin.h);\n"
                  "it takes part like a built-in backend (may be given several times)",
                  &plugins);
  parser.option("--max-depth", "N", "largest number of nodes in one candidate (default 8; a candidate of the\n"
                "whole model is kept whatever its size)",
                &max_depth, 1);
  parser.option("--target", "CPU",
                "the x86-64 CPU generated code is compiled for: host (default), avx2\n"
                "(= x86-64-v3), avx512 (= x86-64-v4) or a CPU LLVM knows (haswell,\n"
                "znver3, ...); this machine must run its code. Costs are kept per target",
                &target);
  parser.flag("--plain-layouts",
              "keep every value between groups in plain NCHW (default: values passed\n"
              "between convolutions stay blocked by one vector of channels: 16 on\n"
              "AVX-512 targets, 8 on AVX2)",
              &plain_layouts);
  parser.flag("--no-winograd",
              "build 3x3 stride-1 convolutions of the native backend directly only\n"
              "(default: also as Winograd F(4x4,3x3) and F(2x2,3x3), the fastest kept)",
              &no_winograd);
  parser.check([this]() -> std::optional<std::string> {
    char* end = nullptr;
    budget_s = std::strtod(budget.c_str(), &end);
    if (budget.empty() || *end != '\0' || !(budget_s >= 0))
      return str_cat("--budget '", budget, "' is not a number of seconds >= 0");
    absl::StatusOr<std::string> cpu = resolve_native_target(target);
    if (!cpu.ok()) return str_cat("--target: ", cpu.status().message());
    target_cpu = *cpu;
    return std::nullopt;
  });
}

std::string PlacementArgs::cost_db_path() const {
  if (no_cost_db) return "";
  return cost_db.empty() ? default_cost_db_path() : cost_db;
}

PlacementOptions PlacementArgs::options() const {
  // Generated code (native) takes what single:NAME and greedy leave, as in BYOC; the reference
  // backend still takes part in a search whose result is not written as an artifact.
  PlacementOptions o = default_compile_placement();
  o.strategy = strategy;
  o.time_budget_s = budget_s;
  o.seed = static_cast<uint64_t>(seed);
  o.cost_db_path = cost_db_path();
  o.code_cache = code_cache_dir(o.cost_db_path);
  o.max_depth = static_cast<int>(max_depth);
  o.target = target_cpu;
  o.channel_block = plain_layouts ? 0 : native_channel_block(target_cpu);
  size_t start = 0;
  while (start < backends.size()) {
    size_t comma = backends.find(',', start);
    if (comma == std::string::npos) comma = backends.size();
    if (comma > start) o.backends.push_back(backends.substr(start, comma - start));
    start = comma + 1;
  }
  return o;
}

ProgressLine::ProgressLine() : tty_(::isatty(STDERR_FILENO) != 0) {}

void ProgressLine::update(const PlacementProgress& p) {
  const bool new_phase = p.phase != phase_;
  const double now = now_ms();
  if (!new_phase && now - last_ms_ < 100) return;  // at most ten updates a second
  last_ms_ = now;
  std::string line;
  if (p.phase == "candidates")
    line = "placement: collecting candidates";
  else if (p.phase == "measure")
    line = absl::StrFormat("placement: measuring candidates %d/%d", p.measured, p.total);
  else if (p.phase == "op-level")
    line = "placement: op-level search";
  else if (p.phase == "seeds")
    line = "placement: graph-level search, measuring its seeds";
  else if (p.phase == "evolve" || p.phase == "finalists" || p.phase == "done")
    line = absl::StrFormat("placement: graph-level search, generation %d, %d placements measured%s",
                           p.generation, p.measured,
                           p.best_ms >= 0 ? absl::StrFormat(", best %.3f ms", p.best_ms) : "");
  else
    line = str_cat("placement: ", p.phase);
  if (tty_) {
    std::string padded = "\r" + line;
    if (line.size() < width_) padded.append(width_ - line.size(), ' ');
    width_ = line.size();
    std::fputs(padded.c_str(), stderr);
  } else if (new_phase) {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  phase_ = p.phase;
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (tty_ && width_) std::fputs("\n", stderr);
  width_ = 0;
}

std::function<void(const PlacementProgress&)> with_progress_line(
    ProgressLine& line, std::function<void(const PlacementProgress&)> inner) {
  return [&line, inner = std::move(inner)](const PlacementProgress& p) {
    line.update(p);
    if (inner) inner(p);
  };
}

}  // namespace collage::cli
