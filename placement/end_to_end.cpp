// End-to-end latency of a placed model, with kernels cached across the placements measured.
#include "placement/end_to_end.h"

#include <map>
#include <memory>
#include <mutex>

#include "collage/kernel_shelf.h"
#include "core/str_cat.h"

namespace collage {
namespace {

// Builds through `inner` once per group: the key is the group's canonical signature plus the
// buffers of its constants (the signature leaves constant contents out, and groups cut from the
// same graph share their constants' buffers), so only the very same group reuses a kernel.
class CachingBackend : public Backend {
 public:
  explicit CachingBackend(const Backend& inner)
      : Backend(inner.name(), inner.device(), inner.version()), inner_(inner) {}

  bool supports_dynamic_shapes() const override { return inner_.supports_dynamic_shapes(); }
  // assign_layouts asks the registry's backends, so a placement is evaluated with the layouts its
  // artifact gets, and its kernels are the artifact's (the code cache, the BuildTracker). (Not
  // forwarded, every value was plain in evaluations: their native kernels were other code than
  // the blocked ones the artifact build then compiled, GoogLeNet's build 54 s after its
  // evaluation had built the same groups.)
  bool accepts_layout(const Graph& group, ValueId v, const Layout& layout) const override {
    return inner_.accepts_layout(group, v, layout);
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    std::string key = canonical_signature(group);
    for (const Tensor& c : group.constants())
      key += str_cat("|", reinterpret_cast<uintptr_t>(c.raw()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = cache_.find(key); it != cache_.end())
        return std::make_unique<ShelvedKernel>(it->second);
    }
    // Built outside the lock: the scorer builds a placement's native kernels on several threads.
    auto built = inner_.build(group, options);
    if (!built.ok()) return built.status();
    std::lock_guard<std::mutex> lock(mu_);
    // A kernel another thread built for the same group meanwhile is kept; this one is dropped.
    auto it = cache_.emplace(std::move(key), std::shared_ptr<Kernel>(std::move(*built))).first;
    return std::make_unique<ShelvedKernel>(it->second);
  }

 private:
  const Backend& inner_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<Kernel>> cache_;
};

}  // namespace

EndToEndMeasurer::EndToEndMeasurer(const Context& ctx, const BackendRegistry& backends,
                                   const Graph& g, ThreadPool* pool, EndToEndOptions options,
                                   uint64_t seed)
    : ctx_(ctx), g_(g), pool_(pool), options_(options) {
  for (const Backend* b : backends.all()) (void)cached_.add(std::make_unique<CachingBackend>(*b));
  for (size_t i = 0; i < g.inputs().size(); ++i)
    inputs_.push_back(random_tensor(g.value(g.inputs()[i]).type, seed + i));
}

absl::StatusOr<double> EndToEndMeasurer::latency_ms(const Placement& p) {
  BuildOptions build;
  build.num_threads = pool_->num_threads();
  build.target = options_.target;
  build.code_cache = options_.code_cache;
  build.shelf = options_.shelf;
  build.choices = options_.choices;
  build.measure_choices = options_.measure_choices;
  build.channel_block = options_.channel_block;
  if (options_.executor != PlacementExecutor::sequential && options_.executor_latency) {
    if (std::optional<double> ms =
            options_.executor_latency(cached_, g_, p, build, options_.executor)) {
      ++wave_scored_;
      return *ms;
    }
  }
  ++sequential_scored_;
  auto model = compile_placement(ctx_, cached_, g_, p, build, pool_);
  if (!model.ok()) return model.status();
  for (int i = 0; i < options_.warmup_runs; ++i)
    if (auto out = model->run(inputs_); !out.ok()) return out.status();
  Sampler sampler(options_.sampling);
  while (!sampler.done()) {
    const double t0 = now_ms();
    auto out = model->run(inputs_);
    const double ms = now_ms() - t0;
    if (!out.ok()) return out.status();
    sampler.add(ms, ms);
  }
  return sampler.stats().median;
}

}  // namespace collage
