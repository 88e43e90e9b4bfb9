// The native backend: the fusion rule over the nodes the TE operator library supports, and
// build(), which lowers a group, JIT-compiles it, runs its pack kernels once and returns the
// kernel with its record.
#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "backends/native/native_fusion.h"
#include "backends/native/native_kernel.h"
#include "backends/native/native_lower.h"
#include "collage/jit.h"
#include "collage/backends/native.h"
#include "core/str_cat.h"
#include "collage/te_ops.h"

namespace collage {
namespace {

constexpr std::string_view kVersion = "native-te/1";

class NativeBackend : public Backend {
 public:
  explicit NativeBackend(NativeBackendOptions options)
      : Backend(std::string(kNativeBackend), DeviceKind::cpu, std::string(kVersion)),
        ops_(options.ops ? std::move(options.ops)
                         : std::make_shared<const te_ops::TeOpRegistry>(te_ops::default_te_ops())),
        tuning_(options.tuning),
        max_tasks_per_thread_(options.max_tasks_per_thread),
        target_(codegen::TargetSpec::host()) {
    add_pattern_rule("native.fuse", [ops = ops_](const Graph& g, const GraphReachability& reach,
                                                 const RuleOptions& rule_options) {
      std::vector<bool> supported(g.nodes().size());
      for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
        supported[n] = native::check_node_supported(g, g.node(n), *ops).ok();
      return native::fusion_candidates(g, reach, rule_options, supported);
    });
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    const int threads = options.num_threads > 0
                            ? options.num_threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // Identical groups get identical code, so the symbol may name the code by what determines it.
    const std::string symbol = str_cat(
        "collage_native_", stable_hash(str_cat(canonical_signature(group), "|", target_.to_string(),
                                               "|", threads, "|", version())));
    native::LowerOptions lo{target_, threads, tuning_};
    auto lowered = native::lower_group(group, *ops_, lo, symbol);
    if (!lowered.ok()) return lowered.status();
    auto jit = compile(symbol, *lowered);
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
        *jit, *fn, tasks, num_args, std::move(record), std::move(lowered->kernel), target_));
  }

 private:
  // The compiled code of `symbol`: from the cache when an identical group was built before (the
  // placement search builds the same block many times), else JIT-compiled and cached.
  absl::StatusOr<std::shared_ptr<const codegen::JitModule>> compile(
      const std::string& symbol, const native::LoweredGroup& lowered) const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = compiled_.find(symbol); it != compiled_.end()) return it->second;
    }
    std::vector<te::PrimFunc> funcs = {lowered.kernel};
    funcs.insert(funcs.end(), lowered.packs.begin(), lowered.packs.end());
    codegen::JitOptions jo;
    jo.target = target_;
    auto jit = codegen::JitModule::compile(funcs, jo);
    if (!jit.ok()) return jit.status();
    std::shared_ptr<const codegen::JitModule> shared = std::move(*jit);
    std::lock_guard<std::mutex> lock(mu_);
    return compiled_.emplace(symbol, std::move(shared)).first->second;
  }

  std::shared_ptr<const te_ops::TeOpRegistry> ops_;
  const tune::TuningLog* tuning_;
  int max_tasks_per_thread_;
  codegen::TargetSpec target_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const codegen::JitModule>> compiled_;
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

std::unique_ptr<Backend> make_native_backend(NativeBackendOptions options) {
  return std::make_unique<NativeBackend>(std::move(options));
}

absl::Status register_native_backend(BackendRegistry& registry) {
  return registry.add(make_native_backend());
}

}  // namespace collage
