// Kernel time and measurement cost estimated from work, at the rates measured so far.
#include "placement/work_estimate.h"

#include <algorithm>

#include "collage/graph_stats.h"

namespace collage {

bool is_contraction(const Node& node) {
  const std::string_view op = node.op_name();
  return op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm";
}

GroupWork group_work(const Graph& group) {
  GroupWork w;
  w.nodes = group.nodes().size();
  for (const Node& n : group.nodes()) {
    w.flops += static_cast<double>(node_flops(group, n));
    w.anchored = w.anchored || is_contraction(n);
  }
  for (ValueId v : group.inputs()) w.bytes += static_cast<double>(group.value(v).type.bytes());
  for (ValueId v : group.outputs()) w.bytes += static_cast<double>(group.value(v).type.bytes());
  for (const Tensor& c : group.constants()) w.bytes += static_cast<double>(c.bytes());
  return w;
}

void WorkEstimator::observe(const std::string& backend, const GroupWork& work, double run_ms,
                            double job_ms) {
  for (Totals* t : {&by_backend_[backend], &all_}) {
    if (run_ms > 0 && units(work) > 0) {
      t->work += units(work);
      t->run_ms += run_ms;
    }
    t->nodes += static_cast<double>(std::max<size_t>(work.nodes, 1));
    t->job_ms += job_ms;
  }
}

double WorkEstimator::run_ms(const std::string& backend, const GroupWork& work) const {
  double per_ms = kDefaultWorkPerMs;
  auto it = by_backend_.find(backend);
  if (it != by_backend_.end() && it->second.run_ms > 0)
    per_ms = it->second.work / it->second.run_ms;
  else if (all_.run_ms > 0)
    per_ms = all_.work / all_.run_ms;
  // A group of no counted work (a reshape) still costs a kernel launch: a microsecond.
  return std::max(units(work) / per_ms, 1e-3);
}

double WorkEstimator::job_ms(const std::string& backend, const GroupWork& work) const {
  auto it = by_backend_.find(backend);
  const Totals& t = it != by_backend_.end() ? it->second : all_;
  if (t.nodes <= 0) return 0;
  return t.job_ms / t.nodes * static_cast<double>(std::max<size_t>(work.nodes, 1));
}

void WorkEstimator::observe_build(const std::string& backend, size_t nodes, double ms,
                                  bool anchored) {
  const double n = static_cast<double>(std::max<size_t>(nodes, 1));
  for (Builds* b : {&builds_[backend], &all_builds_}) {
    Builds::Kind& k = b->kinds[anchored];
    k.min_nodes = k.ms.empty() ? nodes : std::min(k.min_nodes, nodes);
    k.max_nodes = std::max(k.max_nodes, nodes);
    k.ms.insert(std::upper_bound(k.ms.begin(), k.ms.end(), ms), ms);
    if (b->builds == 0) {
      b->first_ms = ms;
      b->first_rate = ms / n;
    } else
      b->rates.insert(std::upper_bound(b->rates.begin(), b->rates.end(), ms / n), ms / n);
    ++b->builds;
  }
}

double WorkEstimator::build_ms(const std::string& backend, size_t nodes) const {
  auto it = builds_.find(backend);
  const Builds& b = it != builds_.end() ? it->second : all_builds_;
  // One build tells no rate: it pays the backend's start.
  if (b.rates.empty()) return b.first_ms;
  // Nor do a few: a model's first kernels are its first convolutions, whose builds are the
  // slowest (RegNetY-400MF: 1.84, 0.98 and 0.32 s a node where the median of its 128 native
  // builds is 0.18 s): their median set the rate of the 124 nodes left, reserved 60 s of a 60 s
  // budget, and the measurement stopped after four native kernels. Until eight are seen, the
  // smallest rate.
  if (b.rates.size() < 8)
    return std::min(b.rates.front(), b.first_rate) * static_cast<double>(nodes);
  // The median, not the mean: one slow build (a DenseNet kernel whose Winograd choice was
  // measured took 816 ms for one node where the others took 6-17 ms) set the rate of the 366
  // nodes left at 211 ms each, reserved 77 s of a 60 s budget, and no kernel was measured after
  // the first batch.
  return b.rates[b.rates.size() / 2] * static_cast<double>(nodes);
}

double WorkEstimator::kernel_build_ms(const std::string& backend, size_t nodes,
                                      bool anchored) const {
  auto it = builds_.find(backend);
  const Builds& b = it != builds_.end() ? it->second : all_builds_;
  const Builds::Kind& k = b.kinds[anchored];
  if (k.ms.size() >= 8 && nodes >= k.min_nodes && nodes <= k.max_nodes) return k.ms[k.ms.size() / 2];
  return build_ms(backend, nodes);
}

}  // namespace collage
