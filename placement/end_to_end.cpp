// End-to-end latency of a placed model.
#include "placement/end_to_end.h"

namespace collage {

EndToEndMeasurer::EndToEndMeasurer(const Context& ctx, const BackendRegistry& backends,
                                   const Graph& g, ThreadPool* pool, EndToEndOptions options,
                                   uint64_t seed)
    : ctx_(ctx), backends_(backends), g_(g), pool_(pool), options_(options) {
  for (size_t i = 0; i < g.inputs().size(); ++i)
    inputs_.push_back(random_tensor(g.value(g.inputs()[i]).type, seed + i));
}

absl::StatusOr<double> EndToEndMeasurer::latency_ms(const Placement& p) {
  BuildOptions build;
  build.num_threads = pool_->num_threads();
  auto model = compile_placement(ctx_, backends_, g_, p, build, pool_);
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
