// CompileResult::report_json: the placement report `collage compile --report`, the C API and
// `collage explain` share.
#include <nlohmann/json.hpp>

#include "collage/compiler.h"
#include "driver/tree_strategy.h"

namespace collage {

std::string CompileResult::report_json() const {
  const OptimizeResult& r = optimized;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.placement.to_json(graph));
  j["model"] = model;
  j["passes"] = passes;
  j["candidates"] = r.candidates;
  j["measured"] = r.measured;
  j["cached"] = r.cached;
  j["evaluations"] = r.evaluations;
  j["choices_measured"] = choices_measured;
  j["choices_reused"] = choices_reused;
  j["kernels_built"] = kernels_built;
  j["kernels_built_by_build"] = kernels_built_by_build;
  j["kernels_reused"] = kernels_reused;
  nlohmann::ordered_json steps = nlohmann::ordered_json::object();
  for (const auto& [step, s] : phases) steps[step] = s;
  j["phases_s"] = std::move(steps);
  nlohmann::ordered_json builds_s = nlohmann::ordered_json::object();
  for (const KernelBuilds& k : builds) builds_s[k.step][k.backend] = {k.builds, k.s};
  j["builds_s"] = std::move(builds_s);
  j["cut"] = cut;
  nlohmann::ordered_json compared = nlohmann::ordered_json::array();
  for (const MeasuredPlacement& m : r.compared)
    compared.push_back({{"strategy", m.strategy}, {"ms", m.ms}, {"note", m.note}});
  j["compared"] = std::move(compared);
  if (!trees.empty()) j["tree_strategies"] = nlohmann::ordered_json::parse(tree_strategy_json(trees));
  if (!batches.empty()) {
    j["batch_min"] = batch_min;
    j["batch_max"] = batch_max;
    j["padded"] = padded;
    j["note"] = batch_note;
    nlohmann::ordered_json plans = nlohmann::ordered_json::array();
    for (const BatchPlan& b : batches)
      plans.push_back({{"batch", b.batch},
                       {"placement", nlohmann::ordered_json::parse(
                                         b.optimized.placement.to_json(b.graph))}});
    j["batches"] = std::move(plans);
  }
  return j.dump(2) + "\n";
}

}  // namespace collage
