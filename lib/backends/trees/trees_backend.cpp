// The trees backend: the TreeEnsemble pattern and build(), which packs the operator's tables into
// a kernel record and instantiates it through the trees runtime module.
#include "backends/common/module_kernel.h"
#include "collage/target.h"
#include "collage/backends/trees.h"
#include "core/str_cat.h"
#include "trees_kernel.h"
#include "trees_module.h"

namespace collage {
namespace {

constexpr int kTables = 6;  // TreeEnsemble's inputs after X

absl::Status check_tables(const Graph& g, const PatternMatch& m) {
  const Node& node = g.node(m.root);
  for (int i = 1; i <= kTables; ++i)
    if (g.constant_of(node.inputs[i]) == nullptr)
      return absl::InvalidArgumentError(str_cat("trees: TreeEnsemble '", node.name, "' input ", i,
                                                " ('", g.value(node.inputs[i]).name,
                                                "') is not a constant"));
  return absl::OkStatus();
}

void put_i64(std::vector<uint8_t>& out, int64_t v) {
  for (int b = 0; b < 8; ++b)
    out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b)));
}

class TreesBackend : public Backend {
 public:
  explicit TreesBackend(const TreesBackendOptions& options)
      : Backend(std::string(kTreesBackend), DeviceKind::cpu, rt_trees::kModuleVersion),
        options_(options) {
    add_pattern("trees.ensemble", is_op("TreeEnsemble"), check_tables);
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    const auto& nodes = group.nodes();
    if (nodes.size() != 1 || nodes[0].op_name() != "TreeEnsemble" || group.outputs().size() != 1)
      return absl::InvalidArgumentError(
          str_cat("trees: group '", group.name(), "' must be one TreeEnsemble node"));
    const Node& node = nodes[0];
    const Tensor* tables[kTables];
    for (int i = 0; i < kTables; ++i) {
      tables[i] = group.constant_of(node.inputs[i + 1]);
      if (tables[i] == nullptr)
        return absl::InvalidArgumentError(
            str_cat("trees: TreeEnsemble '", node.name, "' input ", i + 1, " is not a constant"));
    }
    const Shape& x = group.value(node.inputs[0]).type.shape;
    const Tensor& feature = *tables[0];
    const int64_t trees = feature.shape()[0], internal = feature.shape()[1];
    int64_t depth = 0;
    while ((int64_t{1} << depth) - 1 < internal) ++depth;
    // Node words: the feature index with nan_left in the sign bit.
    Tensor word(DType::i32, feature.shape());
    for (int64_t i = 0; i < feature.numel(); ++i)
      word.data<int32_t>()[i] =
          static_cast<int32_t>(static_cast<uint32_t>(feature.data<int32_t>()[i]) |
                               (tables[2]->data<uint8_t>()[i] ? 0x80000000u : 0u));
    auto variant = kernel_variant(options.target);
    if (!variant.ok()) return variant.status();
    KernelRecord record;
    record.module = std::string(rt_trees::kModuleName);
    record.entry = rt_trees::kEntryEnsemble;
    for (int64_t v :
         {x[0], x[1], trees, depth, tables[5]->shape()[0], static_cast<int64_t>(*variant)})
      put_i64(record.params, v);
    record.constants = {std::move(word), *tables[1], *tables[3], *tables[4], *tables[5]};
    return make_module_kernel(rt_trees::module_table(), std::move(record), group);
  }

 private:
  // The kernel parameter: the pinned variant, or automatic, capped at AVX2 for a target without
  // AVX-512 (the artifact is meant for such a CPU, whatever this one has).
  absl::StatusOr<rt_trees::Variant> kernel_variant(const std::string& target) const {
    const auto pinned = static_cast<rt_trees::Variant>(options_.variant);
    if (options_.variant != TreesKernelVariant::automatic || target.empty() || target == "host")
      return pinned;
    absl::StatusOr<codegen::TargetSpec> spec = codegen::TargetSpec::named(target);
    if (!spec.ok()) return spec.status();
    if (spec->has_feature("avx512f")) return pinned;
    return spec->has_feature("avx2") ? rt_trees::Variant::automatic_avx2
                                     : rt_trees::Variant::scalar;
  }

  TreesBackendOptions options_;
};

}  // namespace

std::string_view trees_kernel_variant_name(TreesKernelVariant v) {
  switch (v) {
    case TreesKernelVariant::automatic:
      return "auto";
    case TreesKernelVariant::scalar:
      return "scalar";
    case TreesKernelVariant::avx512:
      return "avx512";
    case TreesKernelVariant::avx512_ranks:
      return "avx512_ranks";
    case TreesKernelVariant::avx2:
      return "avx2";
    case TreesKernelVariant::avx2_ranks:
      return "avx2_ranks";
  }
  return "?";
}

std::unique_ptr<Backend> make_trees_backend(const TreesBackendOptions& options) {
  return std::make_unique<TreesBackend>(options);
}

absl::Status register_trees_backend(BackendRegistry& registry) {
  return registry.add(make_trees_backend());
}

}  // namespace collage
