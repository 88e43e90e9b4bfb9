// The schedule template of a group anchored at a conv or dense operator; a model's tuning tasks.
#include "te_ops/conv_dense_templates.h"

#include <map>

#include "core/str_cat.h"
#include "te_ops/conv.h"
#include "te_ops/dense.h"

namespace collage::te_ops {

absl::StatusOr<tune::ScheduleTemplate> anchor_schedule_template(const AnchorGroup& group) {
  if (!group.graph || group.anchor < 0)
    return absl::InvalidArgumentError("schedule template: group without an anchor");
  const std::string& op = group.graph->node(group.anchor).op_name();
  if (op == "Conv") return conv::schedule_template(group);
  if (op == "MatMul" || op == "Gemm") return dense::schedule_template(group);
  return absl::InvalidArgumentError(
      str_cat("schedule template: no tunable template for operator '", op, "'"));
}

std::vector<TuningTask> conv_dense_tuning_tasks(const Graph& graph,
                                                const codegen::TargetSpec& target,
                                                int num_threads,
                                                std::vector<std::string>* skipped) {
  TeOpRegistry r;
  register_conv_ops(r);
  register_dense_ops(r, target);
  std::vector<TuningTask> tasks;
  std::map<std::string, size_t> by_signature;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    const Node& node = graph.node(id);
    const TeOpDef* def = r.find(node.op_name());
    if (!def) continue;
    AnchorGroup g;
    g.graph = &graph;
    g.anchor = id;
    g.target = target;
    g.num_threads = num_threads;
    std::vector<te::Tensor> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNoValue) {
        inputs.emplace_back();
        continue;
      }
      const TensorType& t = graph.value(v).type;
      te::Tensor p = te::placeholder(t.shape, t.dtype, str_cat("in", i));
      inputs.push_back(p);
      g.inputs.push_back(p);
      g.input_is_constant.push_back(graph.constant_of(v) != nullptr);
    }
    absl::StatusOr<std::vector<te::Tensor>> out = def->compute(graph, node, inputs);
    if (!out.ok()) {
      if (skipped) skipped->push_back(str_cat(node.name, ": ", out.status().message()));
      continue;
    }
    g.anchor_output = out->front();
    g.outputs = {g.anchor_output};
    absl::StatusOr<tune::ScheduleTemplate> t = anchor_schedule_template(g);
    if (!t.ok()) {
      if (skipped) skipped->push_back(str_cat(node.name, ": ", t.status().message()));
      continue;
    }
    auto [it, fresh] = by_signature.emplace(t->signature, tasks.size());
    if (!fresh) {
      ++tasks[it->second].nodes;
      continue;
    }
    tasks.push_back({node.name, 1, g, std::move(*t)});
  }
  return tasks;
}

}  // namespace collage::te_ops
