// Placement on the command line, shared by `collage compile`, `explain`, `run` and `cost-db`:
// the built-in backends, placement options, the default cost-database path and the live
// progress line.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli_args.h"
#include "collage/executor.h"
#include "collage/placement.h"

namespace collage::cli {

// Registers the built-in backends in priority order: dnnl, eigen, trees, native, dynamic, then the
// reference backend.
absl::Status register_builtin_backends(BackendRegistry& registry);
// register_builtin_backends, then each plugin library of `plugins` (load_backend_plugin), in order.
absl::Status register_backends(BackendRegistry& registry, const std::vector<std::string>& plugins);

// $XDG_CACHE_HOME/collage/cost-db.jsonl, else $HOME/.cache/collage/cost-db.jsonl; empty when
// neither variable is set.
std::string default_cost_db_path();

// The placement options of a command: --placement, --budget, --seed, --cost-db, --no-cost-db,
// --backends, --max-depth, --plugin. declare() registers them; options() turns them into
// PlacementOptions (the cost database defaulting to default_cost_db_path()).
struct PlacementArgs {
  std::string strategy = "two-level";
  std::string budget = "60";
  int64_t seed = 0;
  std::string cost_db;
  bool no_cost_db = false;
  std::string backends;
  int64_t max_depth = 8;
  std::vector<std::string> plugins;  // --plugin LIB.so, any number of times
  std::string target;                // --target CPU as given
  bool plain_layouts = false;        // --plain-layouts: no blocked layouts between groups
  double budget_s = 60;              // parsed --budget
  std::string target_cpu;            // --target resolved (resolve_native_target): "" for the host

  // `seed_option` names the seed's option (`run` has --seed for its random inputs).
  void declare(ArgParser& parser, bool with_strategy, std::string_view seed_option = "--seed");
  PlacementOptions options() const;
  std::string cost_db_path() const;
};

// The options of a placement that goes into an artifact. An artifact cannot hold kernels of the
// reference backend (the runtime has none), and the measured search may well find one cheaper (a
// MaxPool of ResNet-50 once was): when the generated-code backend `native`, which runs any node, is
// built in, it replaces the reference fallback and the reference takes no part.
void keep_reference_out(PlacementOptions& options);

// Prints the optimizer's progress on one stderr line, rewritten in place on a terminal (one line
// per phase otherwise); finish() ends the line.
class ProgressLine {
 public:
  ProgressLine();
  void update(const PlacementProgress& p);
  void finish();

 private:
  bool tty_;
  std::string phase_;
  double last_ms_ = 0;
  size_t width_ = 0;
};

// A placed, compiled model together with the backends it needs.
struct PlacedModel {
  std::unique_ptr<BackendRegistry> backends;
  OptimizeResult result;
  std::optional<CompiledModel> model;
};

// Optimizes `g` with the built-in backends and `plugins` (progress on stderr when `progress`,
// besides any options.progress) and, when `compile`, compiles the placement for in-process runs
// (generated code for options.target).
absl::StatusOr<std::unique_ptr<PlacedModel>> place_model(const Context& ctx, const Graph& g,
                                                         PlacementOptions options, bool progress,
                                                         bool compile,
                                                         const std::vector<std::string>& plugins);

}  // namespace collage::cli
