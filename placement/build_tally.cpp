// BuildTally and the registry whose backends count their builds in one.
#include "placement/build_tally.h"

#include <algorithm>

#include "placement/timing.h"

namespace collage {

void BuildTally::set_step(std::string step) {
  std::lock_guard<std::mutex> lock(mu_);
  step_ = std::move(step);
}

void BuildTally::add(const std::string& backend, double ms, const std::string& step) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& s = step.empty() ? step_ : step;
  if (std::find(steps_.begin(), steps_.end(), s) == steps_.end()) steps_.push_back(s);
  KernelBuilds& k = by_[{s, backend}];
  k.step = s;
  k.backend = backend;
  ++k.builds;
  k.s += ms / 1000;
}

std::vector<KernelBuilds> BuildTally::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<KernelBuilds> out;
  for (const std::string& s : steps_)
    for (const auto& [key, k] : by_)
      if (key.first == s) out.push_back(k);
  return out;
}

namespace {

class TalliedBackend : public Backend {
 public:
  TalliedBackend(const Backend& inner, BuildTally& tally)
      : Backend(inner.name(), inner.device(), inner.version()), inner_(inner), tally_(tally) {}

  bool supports_dynamic_shapes() const override { return inner_.supports_dynamic_shapes(); }
  bool accepts_layout(const Graph& group, ValueId v, const Layout& layout) const override {
    return inner_.accepts_layout(group, v, layout);
  }
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    const double start = now_ms();
    auto kernel = inner_.build(group, options);
    tally_.add(name(), now_ms() - start);
    return kernel;
  }

 private:
  const Backend& inner_;
  BuildTally& tally_;
};

}  // namespace

BackendRegistry tallied_backends(const BackendRegistry& inner, BuildTally& tally) {
  BackendRegistry out;
  for (const Backend* b : inner.all()) (void)out.add(std::make_unique<TalliedBackend>(*b, tally));
  return out;
}

}  // namespace collage
