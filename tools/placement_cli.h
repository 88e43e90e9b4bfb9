// Placement on the command line, shared by `collage compile`, `explain`, `run` and `cost-db`:
// the compiler with its plugins, placement options, the default cost-database path and the live
// progress line.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli_args.h"
#include "collage/backends/native.h"
#include "collage/compiler.h"
#include "collage/placement.h"

namespace collage::cli {

// A compiler with the built-in backends (the native one building 3 x 3 convolutions as `winograd`
// says) and then each plugin library of `plugins` (--plugin), in order; errors name the plugin's
// path.
absl::StatusOr<Compiler> make_compiler(const std::vector<std::string>& plugins,
                                       NativeWinograd winograd = NativeWinograd::measure);

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
  bool no_winograd = false;          // --no-winograd: the native backend's direct convs only
  double budget_s = 60;              // parsed --budget
  std::string target_cpu;            // --target resolved (resolve_native_target): "" for the host

  // `seed_option` names the seed's option (`run` has --seed for its random inputs).
  void declare(ArgParser& parser, bool with_strategy, std::string_view seed_option = "--seed");
  PlacementOptions options() const;
  std::string cost_db_path() const;
};

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

// The optimizer's progress on the ProgressLine `line`, then `inner` (may be empty).
std::function<void(const PlacementProgress&)> with_progress_line(
    ProgressLine& line, std::function<void(const PlacementProgress&)> inner);

}  // namespace collage::cli
