// The native backend: the fusion rule over the nodes the TE operator library supports, and
// build(), which lowers a group, JIT-compiles it, runs its pack kernels once and returns the
// kernel with its record.
#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "backends/native/native_code_cache.h"
#include "backends/native/native_fusion.h"
#include "backends/native/native_kernel.h"
#include "backends/native/native_layouts.h"
#include "backends/native/native_lower.h"
#include "backends/native/native_winograd.h"
#include "collage/jit.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"

namespace collage {
namespace {

// native-te/10: of the loops around a register tile, LLVM unrolls at most the innermost
// (codegen/llvm/emit_stmt.cpp): reductions over 32 channels or fewer no longer unroll whole and
// spill; the depthwise taps are unrolled by the schedule.
// native-te/9: erf is a rational approximation (codegen/llvm/emit_math.cpp), half the
// instructions of the exp-based one: GELU epilogues cost less; a MatMul whose B the batch shares
// tiles A's batch and rows as one axis of rows (te_ops/dense_compute.cpp); vector accesses whose
// lanes are a constant distance apart (transposes) load and store a scalar a lane, not a gather;
// sigmoid reduces e^-x without math_exp's range checks.
// native-te/8: buffers above the stack limit come from the per-thread workspace
// (runtime/core/kernel_workspace.h), not malloc, so costs measured before were page faults too;
// grouped convolutions' register tiles stay within a group; and since native-te/7, 1x1
// convolutions over flattened positions.
// native-te/7: GlobalAveragePool sums a blocked input a vector of channels at a time, so the
// convolution before a squeeze-and-excitation block writes blocks.
// native-te/6: strided 1x1 convolutions pack the positions their windows read (Geometry::gathers).
// native-te/5: Winograd convolutions in the group's channel block (8 between AVX2 kernels), their
// data pack a vector of channels at a time.
// native-te/4: the Winograd choice made once per convolution, whatever its epilogue (so a group
// may get another kernel than under native-te/3), and remembered (BuildOptions::choices).
// native-te/3: Winograd F(4x4, 3x3) convolutions where they measure faster.
// native-te/2: register tiles and B panels derived from the target's vector width and register
// count; kernels compiled for BuildOptions::target.
constexpr std::string_view kVersion = "native-te/10";

// The kind of the measured choice between the direct and the Winograd kernels (MeasuredChoices).
constexpr std::string_view kWinogradChoice = "native-winograd";

// The version measured costs are kept under: a mode other than `measure` builds other kernels
// for the same groups.
std::string version_of(const NativeBackendOptions& o) {
  switch (o.winograd) {
    case NativeWinograd::off: return str_cat(kVersion, "/direct");
    case NativeWinograd::always:
      return str_cat(kVersion, "/winograd", o.winograd_tile == 2 ? 2 : 4);
    case NativeWinograd::measure: break;
  }
  return std::string(kVersion);
}

class NativeBackend : public Backend {
 public:
  explicit NativeBackend(NativeBackendOptions options)
      : Backend(std::string(kNativeBackend), DeviceKind::cpu, version_of(options)),
        user_ops_(std::move(options.ops)),
        tuning_(options.tuning),
        max_tasks_per_thread_(options.max_tasks_per_thread),
        winograd_(options.winograd),
        winograd_tile_(options.winograd_tile == 2 ? 2 : 4),
        host_(codegen::TargetSpec::host()) {
    // Which nodes are supported does not depend on the target.
    std::shared_ptr<const te_ops::TeOpRegistry> ops =
        user_ops_ ? user_ops_
                  : std::make_shared<const te_ops::TeOpRegistry>(te_ops::default_te_ops(host_));
    add_pattern_rule("native.fuse", [ops](const Graph& g, const GraphReachability& reach,
                                          const RuleOptions& rule_options) {
      std::vector<bool> supported(g.nodes().size());
      for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
        supported[n] = native::check_node_supported(g, g.node(n), *ops).ok();
      return native::fusion_candidates(g, reach, rule_options, supported);
    });
  }

  bool accepts_layout(const Graph& group, ValueId v, const Layout& layout) const override {
    return native::takes_layout(group, v, layout);
  }

  bool build_times_choices(const Graph& group, const BuildOptions& options) const override {
    if (!options.measure_choices || winograd_ != NativeWinograd::measure || user_ops_ ||
        !native::winograd_group(group))
      return false;
    auto target = target_for(options.target);
    return target.ok() && known_choice(group, *target, threads_of(options), options) < 0;
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    const int threads = threads_of(options);
    auto target = target_for(options.target);
    if (!target.ok()) return target.status();
    const bool winograd = winograd_ != NativeWinograd::off && !user_ops_ &&
                          native::winograd_group(group);
    if (winograd && winograd_ == NativeWinograd::always)
      return build_winograd(group, *target, threads, options.code_cache, winograd_tile_);
    const auto build_direct = [&] {
      return build_with(group, *target->ops, target->spec, threads, options.code_cache, "");
    };
    if (!winograd) return build_direct();
    const int chosen = known_choice(group, *target, threads, options);
    if (chosen == 0 || (chosen < 0 && !options.measure_choices)) return build_direct();
    if (chosen > 0) {
      auto kept = build_winograd(group, *target, threads, options.code_cache, chosen);
      return kept.ok() ? std::move(kept) : build_direct();
    }
    // The three contenders compile side by side (this build runs alone: build_times_choices),
    // then are timed one after another.
    absl::StatusOr<std::unique_ptr<Kernel>> f4 = absl::UnknownError("not built"),
                                            f2 = absl::UnknownError("not built");
    std::thread f4_builder(
        [&] { f4 = build_winograd(group, *target, threads, options.code_cache, 4); });
    auto direct = build_direct();
    if (direct.ok()) f2 = build_winograd(group, *target, threads, options.code_cache, 2);
    f4_builder.join();
    if (!direct.ok()) return direct;
    std::vector<std::unique_ptr<Kernel>> kernels;
    std::vector<int> tiles = {0};
    kernels.push_back(std::move(*direct));
    for (auto [tile, k] : {std::pair{4, &f4}, std::pair{2, &f2}}) {
      if (!k->ok()) continue;
      kernels.push_back(std::move(**k));
      tiles.push_back(tile);
    }
    std::vector<Kernel*> contenders;
    for (const auto& k : kernels) contenders.push_back(k.get());
    const size_t best = native::fastest(group, contenders);
    const std::string key = choice_key(group, *target, threads);
    {
      std::lock_guard<std::mutex> lock(mu_);
      winograd_chosen_.emplace(key, tiles[best]);
    }
    if (options.choices)
      options.choices->remember(kWinogradChoice, key, {static_cast<double>(tiles[best])});
    return std::move(kernels[best]);
  }

 private:
  // A target the backend compiles for, with the operator library built for it and the same
  // with Winograd convolutions of either tile size (null with a user's operator library).
  struct Target {
    codegen::TargetSpec spec;
    std::shared_ptr<const te_ops::TeOpRegistry> ops, winograd_f4, winograd_f2;
  };

  static int threads_of(const BuildOptions& options) {
    return options.num_threads > 0
               ? options.num_threads
               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }

  // The key of `group`'s Winograd choice: the convolution (winograd_choice_key), target, thread
  // count and backend version (options.choices keys by the device).
  std::string choice_key(const Graph& group, const Target& target, int threads) const {
    return str_cat(native::winograd_choice_key(group), "|", target.spec.to_string(), "|",
                   target.spec.features, "|threads=", threads, "|", version());
  }

  // The fastest of the direct kernel, F(4x4, 3x3) and F(2x2, 3x3) for `group` (0 direct, else
  // the tile), as measured before in this process or remembered in options.choices; -1 when
  // neither knows it. A choice found in options.choices is kept here, so it is looked up (and
  // counted as reused) once.
  int known_choice(const Graph& group, const Target& target, int threads,
                   const BuildOptions& options) const {
    const std::string key = choice_key(group, target, threads);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = winograd_chosen_.find(key); it != winograd_chosen_.end()) return it->second;
    }
    if (!options.choices) return -1;
    auto v = options.choices->lookup(kWinogradChoice, key);
    if (!v || v->size() != 1 || ((*v)[0] != 0 && (*v)[0] != 2 && (*v)[0] != 4)) return -1;
    const int chosen = static_cast<int>((*v)[0]);
    std::lock_guard<std::mutex> lock(mu_);
    winograd_chosen_.emplace(key, chosen);
    return chosen;
  }

  // The Winograd kernel of `group` with `tile` x `tile` output tiles.
  absl::StatusOr<std::unique_ptr<Kernel>> build_winograd(const Graph& group, const Target& target,
                                                         int threads, const std::string& code_cache,
                                                         int tile) const {
    const auto& ops = tile == 2 ? target.winograd_f2 : target.winograd_f4;
    return build_with(group, *ops, target.spec, threads, code_cache, str_cat("winograd", tile));
  }

  // Lowers `group` with the operator library `ops` (`variant` names it in the symbol when it is
  // not the target's own), compiles it and runs its pack kernels once.
  absl::StatusOr<std::unique_ptr<Kernel>> build_with(const Graph& group,
                                                     const te_ops::TeOpRegistry& ops,
                                                     const codegen::TargetSpec& spec, int threads,
                                                     const std::string& code_cache,
                                                     const std::string& variant) const {
    // Identical groups get identical code, so the symbol may name the code by what determines it.
    const std::string symbol =
        str_cat("collage_native_",
                stable_hash(str_cat(canonical_signature(group), "|", spec.to_string(), "|",
                                    spec.features, "|", threads, "|", version(),
                                    variant.empty() ? "" : "|", variant)));
    native::LowerOptions lo{spec, threads, tuning_};
    auto lowered = native::lower_group(group, ops, lo, symbol);
    if (!lowered.ok()) return lowered.status();
    auto jit = compile(symbol, *lowered, spec, code_cache);
    if (!jit.ok()) return jit.status();
    auto fn = (*jit)->lookup(symbol);
    if (!fn.ok()) return fn.status();

    std::vector<Tensor> constants;
    for (const native::ConstantArg& c : lowered->constants) {
      if (c.pack < 0) {
        constants.push_back(*group.constant_of(c.value));
        continue;
      }
      // A pre-packed weight: the pack kernel runs once, here.
      Tensor packed(c.type.dtype, c.type.shape);
      std::vector<void*> args;
      for (ValueId v : c.pack_inputs)
        args.push_back(const_cast<void*>(group.constant_of(v)->raw()));
      args.push_back(packed.raw());
      auto pack_fn = (*jit)->lookup(lowered->packs[c.pack].name);
      if (!pack_fn.ok()) return pack_fn.status();
      codegen::run_kernel(*pack_fn, args.data(), 1, nullptr);
      constants.push_back(std::move(packed));
    }
    const int32_t tasks =
        native_task_count(lowered->parallel_extent, threads, max_tasks_per_thread_);
    KernelRecord record{std::string(kNativeBackend), symbol, {}, std::move(constants)};
    const size_t num_args = group.inputs().size() + group.outputs().size();
    return std::unique_ptr<Kernel>(new native::NativeKernel(
        *jit, *fn, tasks, num_args, std::move(record), std::move(lowered->kernel), spec));
  }


  // The target named by BuildOptions::target ("" or "host": this machine), made once per name.
  absl::StatusOr<Target> target_for(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = targets_.find(name); it != targets_.end()) return it->second;
    absl::StatusOr<codegen::TargetSpec> spec =
        name.empty() || name == "host" ? host_ : codegen::TargetSpec::named(name);
    if (!spec.ok()) return spec.status();
    if (absl::Status s = spec->runs_on(host_); !s.ok()) return s;
    Target t{*spec, user_ops_ ? user_ops_
                              : std::make_shared<const te_ops::TeOpRegistry>(
                                    te_ops::default_te_ops(*spec)),
             nullptr, nullptr};
    if (!user_ops_) {
      t.winograd_f4 = native::winograd_ops(*t.ops, 4);
      t.winograd_f2 = native::winograd_ops(*t.ops, 2);
    }
    return targets_.emplace(name, std::move(t)).first->second;
  }

  // The compiled code of `symbol`: from memory when an identical group was built before (the
  // placement search builds the same block many times), else loaded from the code cache on disk
  // (`cache_dir`, when given) or compiled into an object (which an artifact links as it is) and
  // stored there.
  absl::StatusOr<std::shared_ptr<const codegen::JitModule>> compile(
      const std::string& symbol, const native::LoweredGroup& lowered,
      const codegen::TargetSpec& target, const std::string& cache_dir) const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = compiled_.find(symbol); it != compiled_.end()) return it->second;
    }
    std::vector<te::PrimFunc> funcs = {lowered.kernel};
    funcs.insert(funcs.end(), lowered.packs.begin(), lowered.packs.end());
    absl::StatusOr<std::unique_ptr<codegen::JitModule>> jit = absl::NotFoundError("");
    const uint64_t key = native::code_key(funcs, target, version());
    if (!cache_dir.empty())
      if (std::optional<std::string> object = native::read_cached_code(cache_dir, key)) {
        std::vector<std::string> names;
        for (const te::PrimFunc& f : funcs) names.push_back(f.name);
        jit = codegen::JitModule::load_object(std::move(*object), names, target);
      }
    if (!jit.ok()) {
      codegen::JitOptions jo;
      jo.target = target;
      jo.keep_object = true;
      jit = codegen::JitModule::compile(funcs, jo);
      if (!jit.ok()) return jit.status();
      // A cache that cannot be written costs the next compile time, not this one correctness.
      if (!cache_dir.empty()) (void)native::write_cached_code(cache_dir, key, (*jit)->object());
    }
    std::shared_ptr<const codegen::JitModule> shared = std::move(*jit);
    std::lock_guard<std::mutex> lock(mu_);
    return compiled_.emplace(symbol, std::move(shared)).first->second;
  }

  std::shared_ptr<const te_ops::TeOpRegistry> user_ops_;  // null: default_te_ops per target
  const tune::TuningLog* tuning_;
  int max_tasks_per_thread_;
  NativeWinograd winograd_;
  int winograd_tile_;
  codegen::TargetSpec host_;
  mutable std::mutex mu_;
  mutable std::map<std::string, Target> targets_;
  mutable std::map<std::string, std::shared_ptr<const codegen::JitModule>> compiled_;
  // By the Winograd choice's key: the kernel kept, 0 direct, else the Winograd tile.
  mutable std::map<std::string, int> winograd_chosen_;
};

}  // namespace

int32_t native_task_count(int64_t extent, int threads, int max_tasks_per_thread) {
  if (extent <= 0) return 1;
  const int64_t groups = std::min<int64_t>(extent, std::max(threads, 1));
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t balanced = ceil_div(extent, groups);  // the largest of `groups` tasks
  const int64_t most = std::min<int64_t>(extent, groups * std::max(max_tasks_per_thread, 1));
  for (int64_t n = most; n > groups; --n) {
    // The generated code gives task i iterations [i * per, min((i + 1) * per, extent)).
    const int64_t per = ceil_div(extent, n);
    if ((n - 1) * per >= extent) continue;  // the last task would be empty
    int64_t largest = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t first = n * g / groups, last = n * (g + 1) / groups;  // chunk_range
      largest = std::max(largest, std::min(last * per, extent) - first * per);
    }
    if (largest <= balanced) return static_cast<int32_t>(n);
  }
  // One task per thread, less the tasks the generated split would leave empty.
  return static_cast<int32_t>(ceil_div(extent, balanced));
}

absl::StatusOr<std::string> resolve_native_target(std::string_view target) {
  if (target.empty() || target == "host") return std::string();
  absl::StatusOr<codegen::TargetSpec> spec = codegen::TargetSpec::named(std::string(target));
  if (!spec.ok()) return spec.status();
  if (absl::Status s = spec->runs_on(codegen::TargetSpec::host()); !s.ok()) return s;
  return spec->cpu;
}

int32_t native_channel_block(std::string_view target) {
  absl::StatusOr<codegen::TargetSpec> spec =
      target.empty() || target == "host" ? codegen::TargetSpec::host()
                                         : codegen::TargetSpec::named(std::string(target));
  return spec.ok() && spec->vector_bytes() == 32 ? 8 : kDefaultChannelBlock;
}

std::unique_ptr<Backend> make_native_backend(NativeBackendOptions options) {
  return std::make_unique<NativeBackend>(std::move(options));
}

absl::Status register_native_backend(BackendRegistry& registry) {
  return registry.add(make_native_backend());
}

}  // namespace collage
