// The reference backend: runs any group with the reference executor (groups with data-dependent
// shapes included); the fallback that claims every single node.
#include <cstring>

#include "collage/executor.h"
#include "collage/reference.h"

namespace collage {
namespace {

class ReferenceKernel : public Kernel {
 public:
  explicit ReferenceKernel(Graph group) : group_(std::move(group)) {
    record_.module = std::string(kReferenceBackend);
    record_.entry = "run_reference";
  }

  int32_t task_count() const override { return 1; }

  absl::Status run_task(void* const* args, int32_t) override {
    if (absl::Status s = refuse_strings(); !s.ok()) return s;
    if (dynamic_shapes())
      return absl::FailedPreconditionError(
          "a group with sizes known only at run time runs through run_dynamic, not by task");
    std::vector<Tensor> inputs;
    const size_t num_inputs = group_.inputs().size();
    for (size_t i = 0; i < num_inputs; ++i) {
      const TensorType& t = group_.value(group_.inputs()[i]).type;
      inputs.push_back(Tensor::wrap(t.dtype, t.shape, args[i], nullptr));
    }
    auto outputs = run_reference(group_, inputs);
    if (!outputs.ok()) return outputs.status();
    for (size_t i = 0; i < outputs->size(); ++i) {
      const Tensor& out = (*outputs)[i];
      if (out.bytes()) std::memcpy(args[num_inputs + i], out.raw(), out.bytes());
    }
    return absl::OkStatus();
  }

  const KernelRecord& record() const override { return record_; }

  bool dynamic_shapes() const override {
    for (const Value& v : group_.values())
      if (v.type.is_dynamic()) return true;
    return false;
  }
  absl::StatusOr<std::vector<Tensor>> run_dynamic(const std::vector<Tensor>& inputs) override {
    if (absl::Status s = refuse_strings(); !s.ok()) return s;
    return run_reference(group_, inputs);
  }

 private:
  // Kernels exchange values through arena buffers, which cannot hold std::string elements: a
  // group with a string value runs in the reference executor (run_reference), or placed on the
  // strings backend.
  absl::Status refuse_strings() const {
    for (const Value& v : group_.values())
      if (v.type.dtype == DType::str)
        return absl::UnimplementedError(
            "reference kernel of group '" + group_.name() + "': '" + v.name +
            "' is a string tensor; the strings backend runs the string operators");
    return absl::OkStatus();
  }

  Graph group_;
  KernelRecord record_;
};

class ReferenceBackend : public Backend {
 public:
  ReferenceBackend() : Backend(std::string(kReferenceBackend), DeviceKind::cpu, "1") {
    add_pattern_rule("single-node",
                     [](const Graph& g, const GraphReachability&, const RuleOptions&) {
                       std::vector<NodeSet> out;
                       for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
                         out.push_back(NodeSet::of(g.nodes().size(), {n}));
                       return out;
                     });
  }

  bool supports_dynamic_shapes() const override { return true; }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    return std::make_unique<ReferenceKernel>(group);
  }
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

}  // namespace collage
