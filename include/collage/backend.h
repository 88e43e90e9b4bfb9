// Backends (BYOC): a backend names the subgraphs it can run (patterns and pattern rules) and
// builds one group at a time into a Kernel. Backends are registered on a BackendRegistry owned
// by the caller (usually next to the Context); nothing is global.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/kernel.h"
#include "collage/measured_choices.h"
#include "collage/pattern.h"
#include "collage/subgraph.h"

namespace collage {

enum class DeviceKind : uint8_t { cpu, cuda };
std::string_view device_kind_name(DeviceKind d);

class Backend;
class KernelShelf;

// One candidate group: nodes of the graph that `backend` offers to run as one kernel.
struct Candidate {
  NodeSet nodes;
  const Backend* backend = nullptr;
  std::string origin;  // the pattern or rule that produced it
};

// Extra acceptance test for a pattern match (attributes, shapes, dtypes the library supports).
// Returns OK or a reason (shown in placement explanations).
using PatternCheck = std::function<absl::Status(const Graph& g, const PatternMatch& m)>;

struct RuleOptions {
  int max_depth = 8;  // largest number of nodes a rule may put in one candidate
};
// A pattern rule generates candidate node sets directly (e.g. the native backend's fusion rule).
using PatternRule =
    std::function<std::vector<NodeSet>(const Graph& g, const GraphReachability& r,
                                       const RuleOptions& options)>;

struct BuildOptions {
  int num_threads = 0;  // threads the kernel may use (0: every core)
  // The CPU that generated code is compiled for (backends that generate code: native); "" or
  // "host": this machine. Otherwise an x86-64 CPU name ("avx2" = "x86-64-v3", "avx512" =
  // "x86-64-v4", "haswell", ...) whose code this machine runs, so that an AVX-512 machine builds,
  // runs and measures AVX2 code. Library backends run what their library picks.
  std::string target;
  // A directory where backends that generate code keep it between compiles (the native
  // backend's objects, named by what their code depends on); "": none.
  std::string code_cache;
  // Channel block of the blocked layouts that groups of a placed graph pass each other
  // (Layout::c_block; assign_layouts): 16 or 8 (native and dnnl take both), -1 for 16
  // (kDefaultChannelBlock; native_channel_block gives the target's own), 0 keeps every value plain.
  int32_t channel_block = -1;
  // Where a backend that chooses between implementations by timing them on this machine (the
  // native backend's Winograd or direct convolution) remembers and finds its choices (not owned;
  // null: in this process only).
  MeasuredChoices* choices = nullptr;
  // Whether a choice found neither in `choices` nor in this process may be made by timing the
  // alternatives; false (a compile whose time budget is spent): the backend's default is taken
  // (native: the direct convolution), neither measured nor remembered.
  bool measure_choices = true;
  // Where a backend whose builds no code cache keeps (openvino) keeps the kernels it builds and
  // finds those built before in the same compile, so that none is compiled twice (not owned;
  // null: every build compiles).
  KernelShelf* shelf = nullptr;
};

class Backend {
 public:
  Backend(std::string name, DeviceKind device, std::string version)
      : name_(std::move(name)), device_(device), version_(std::move(version)) {}
  virtual ~Backend() = default;

  const std::string& name() const { return name_; }
  DeviceKind device() const { return device_; }
  // Part of every cost-database key: bump it when generated code or library version changes.
  const std::string& version() const { return version_; }

  void add_pattern(std::string name, Pattern pattern, PatternCheck check = nullptr);
  void add_pattern_rule(std::string name, PatternRule rule);

  // Every convex candidate of this backend in g: matches of its patterns that pass their checks,
  // and the node sets its rules generate, less those with a node that has a dynamic dimension
  // when the backend does not support them. Deterministic order.
  std::vector<Candidate> candidates(const Graph& g, const GraphReachability& reach,
                                    const RuleOptions& options = {}) const;

  // Whether the backend runs groups with data-dependent shapes (Kernel::run_dynamic). A backend
  // that does not is offered no candidate holding a node with a dynamic dimension.
  virtual bool supports_dynamic_shapes() const { return false; }

  // Builds one group, given as a standalone graph (extract_subgraph). Errors say why the backend
  // cannot run it, including an input or output in a layout it does not take.
  virtual absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                        const BuildOptions& options) const = 0;

  // Whether build(group, options) may time alternatives on this machine before it returns (the
  // native backend's Winograd choice for a convolution, not yet made nor remembered). A builder
  // that runs builds side by side runs such a build alone, so that no compile takes the cores it
  // times on. Default: never.
  virtual bool build_times_choices(const Graph& group, const BuildOptions& options) const {
    (void)group;
    (void)options;
    return false;
  }

  // Whether build() takes `v`, an input or an output of the standalone group graph `group` (as
  // extract_subgraph cuts it, every layout plain), in `layout` instead, and runs at least as fast
  // with it. assign_layouts asks the groups on both sides of a value. Default: plain only.
  // (Inline, like every other virtual of Backend: libcollage_compiler exports no vtable, so a
  // backend defined outside it, as the examples' are, needs none with a key function.)
  virtual bool accepts_layout(const Graph& group, ValueId v, const Layout& layout) const {
    (void)group;
    (void)v;
    return layout.plain();
  }

 private:
  struct PatternEntry {
    std::string name;
    Pattern pattern;
    PatternCheck check;
  };
  struct RuleEntry {
    std::string name;
    PatternRule rule;
  };
  std::string name_;
  DeviceKind device_;
  std::string version_;
  std::vector<PatternEntry> patterns_;
  std::vector<RuleEntry> rules_;
};

// OK when every value of `group` is in the plain layout; else InvalidArgument naming `backend` and
// the first value that is not (the check of backends that take no other layout).
absl::Status require_plain_layouts(const Graph& group, std::string_view backend);

// Backends by name, in registration order (the priority order of the `greedy` baseline).
class BackendRegistry {
 public:
  // AlreadyExists when the name is taken.
  absl::Status add(std::unique_ptr<Backend> backend);
  const Backend* find(std::string_view name) const;
  std::vector<const Backend*> all() const;
  // Records why a backend the library knows of is not registered (e.g. built without its
  // library), so that asking for it explains that rather than calling it unknown.
  void add_unavailable(std::string name, std::string why);
  // Why `name` is not registered, or an empty string when no reason was recorded.
  std::string unavailable_reason(std::string_view name) const;
  // `name` is not registered: "backend 'NAME' is not registered" and the recorded reason.
  std::string not_registered(std::string_view name) const;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
  std::vector<std::pair<std::string, std::string>> unavailable_;  // (name, why)
};

}  // namespace collage
