// The Eigen backend: its patterns (each checked by lowering the match) and build(), which lowers
// a group and instantiates it through the Eigen runtime module.
#include "backends/common/module_kernel.h"
#include "collage/backends/eigen.h"
#include "core/str_cat.h"
#include "eigen_lowering.h"
#include "eigen_module.h"

namespace collage {
namespace {

// Longest elementwise chain fused after an anchor operator (e.g. bias Add, residual Add, Relu).
constexpr int kMaxEpilogue = 3;

// One elementwise step applied to the value `x` matches.
Pattern epilogue_step(const Pattern& x) {
  return is_op(eigen::unary_op_names())(x) | is_op(eigen::binary_op_names())(x, wildcard()) |
         is_op("Sub", "Div", "Pow")(wildcard(), x);
}

Pattern with_epilogue(Pattern p, int steps) {
  for (int i = 0; i < steps; ++i) p = p.optional(epilogue_step);
  return p;
}

absl::Status check_match(const Graph& g, const PatternMatch& m) {
  return eigen::lower_group(g, m.nodes.to_vector(), m.inputs, /*materialize=*/false).status();
}

class EigenBackend : public Backend {
 public:
  EigenBackend() : Backend(std::string(kEigenBackend), DeviceKind::cpu, "eigen-3.4/1") {
    std::vector<std::string> elementwise = eigen::unary_op_names();
    for (const std::string& op : eigen::binary_op_names()) elementwise.push_back(op);
    add_fused("eigen.matmul", is_op("MatMul"));
    add_fused("eigen.gemm", is_op("Gemm"));
    add_fused("eigen.conv", is_op("Conv"));
    add_fused("eigen.elementwise", is_op(elementwise));
    add_pattern("eigen.reduce", is_op("ReduceSum", "ReduceMean", "ReduceMax"), check_match);
    add_pattern("eigen.softmax", is_op("Softmax", "LogSoftmax"), check_match);
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    const auto& nodes = group.nodes();
    if (nodes.empty()) return absl::InvalidArgumentError("eigen: empty group");
    if (group.outputs().size() != 1 || group.outputs()[0] != nodes.back().outputs[0])
      return absl::InvalidArgumentError(str_cat("eigen: group '", group.name(),
                                                "' must have exactly one output, the result of ",
                                                nodes.back().name));
    std::vector<NodeId> ids;
    for (NodeId n = 0; n < static_cast<NodeId>(nodes.size()); ++n) ids.push_back(n);
    absl::StatusOr<eigen::LoweredKernel> lowered =
        eigen::lower_group(group, ids, group.inputs(), /*materialize=*/true);
    if (!lowered.ok()) return lowered.status();
    KernelRecord record{std::string(kEigenBackend), std::move(lowered->entry),
                        std::move(lowered->params), std::move(lowered->constants)};
    return make_module_kernel(rt_eigen::module_table(), std::move(record), group);
  }

 private:
  // `anchor` followed by up to kMaxEpilogue elementwise steps. The matcher returns the longest
  // chain ending at a node; when the check turns that down (an operand that would broadcast the
  // result, a value read twice), the shorter chains ending there come from the patterns with
  // fewer steps.
  void add_fused(const std::string& name, const Pattern& anchor) {
    for (int steps = kMaxEpilogue; steps >= 0; --steps)
      add_pattern(name, with_epilogue(anchor, steps), check_match);
  }
};

}  // namespace

std::unique_ptr<Backend> make_eigen_backend() {
  return std::make_unique<EigenBackend>();
}

absl::Status register_eigen_backend(BackendRegistry& registry) {
  return registry.add(make_eigen_backend());
}

}  // namespace collage
