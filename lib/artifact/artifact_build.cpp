// build_artifact_kernels, compile_artifact and write_artifact_for: each placed group is cut out of
// the graph and built by its backend; the kernel's record is what the artifact stores.
#include "artifact/artifact.h"
#include "collage/executor.h"
#include "core/str_cat.h"
#include "io/file_io.h"

namespace collage {
namespace {

// "MatMul_0 Relu_1" (the first few node names of a group, then a count).
std::string group_nodes(const Graph& g, const PlacedGroup& group) {
  std::string s;
  std::vector<NodeId> nodes = group.nodes.to_vector();
  for (size_t i = 0; i < nodes.size() && i < 4; ++i)
    s += str_cat(i ? " " : "", g.node(nodes[i]).name);
  if (nodes.size() > 4) s += str_cat(" and ", nodes.size() - 4, " more");
  return s;
}

}  // namespace

absl::StatusOr<std::vector<ArtifactKernel>> build_artifact_kernels(const Context& ctx,
                                                                   const BackendRegistry& backends,
                                                                   const Graph& graph,
                                                                   const Placement& placement,
                                                                   const BuildOptions& options) {
  const size_t num_nodes = graph.nodes().size();
  std::vector<ArtifactKernel> kernels;
  std::vector<bool> available(graph.values().size(), false);
  for (ValueId v : graph.inputs()) available[v] = true;
  for (size_t i = 0; i < placement.groups.size(); ++i) {
    const PlacedGroup& group = placement.groups[i];
    if (group.nodes.universe() != num_nodes || group.nodes.empty())
      return absl::InvalidArgumentError(
          str_cat("placement: group ", i, " is not a non-empty node set of this graph"));
    const std::string nodes = group_nodes(graph, group);
    const std::string label = str_cat("group ", i, " (", group.backend, ": ", nodes, ")");
    if (group.backend == kReferenceBackend)
      return absl::InvalidArgumentError(
          str_cat(label,
                  " is placed on the reference backend, which has no runtime module: an artifact "
                  "needs every node on a backend with one (native, eigen, dnnl, ...)"));
    const Backend* backend = backends.find(group.backend);
    if (!backend)
      return absl::InvalidArgumentError(
          str_cat(label, ": no backend named '", group.backend, "' is registered"));
    auto sub = extract_subgraph(ctx, graph, group.nodes);
    if (!sub.ok())
      return absl::Status(sub.status().code(), str_cat(label, ": ", sub.status().message()));
    ArtifactKernel k;
    k.name = nodes;
    k.backend = group.backend;
    for (ValueId v : sub->parent_inputs) {
      if (!available[v])
        return absl::InvalidArgumentError(
            str_cat(label, " reads '", graph.value(v).name,
                    "' before any earlier group produces it (groups out of order)"));
      k.args.push_back(v);
    }
    k.num_inputs = k.args.size();
    for (ValueId v : sub->parent_outputs) {
      available[v] = true;
      k.args.push_back(v);
    }
    auto kernel = backend->build(sub->graph, options);
    if (!kernel.ok())
      return absl::Status(kernel.status().code(),
                          str_cat(label, ": build failed: ", kernel.status().message()));
    k.record = (*kernel)->record();
    k.task_count = (*kernel)->task_count();
    k.kernel = std::shared_ptr<Kernel>(*std::move(kernel));
    if (k.record.module == kReferenceBackend)
      return absl::InvalidArgumentError(str_cat(
          label, ": its kernel runs on the reference module, which the runtime does not have"));
    kernels.push_back(std::move(k));
  }
  return kernels;
}

absl::StatusOr<std::string> compile_artifact(const Context& ctx, const BackendRegistry& backends,
                                             const Graph& graph, const Placement& placement,
                                             const ArtifactOptions& options,
                                             ArtifactSummary* summary) {
  auto kernels = build_artifact_kernels(ctx, backends, graph, placement, options.build);
  if (!kernels.ok()) return kernels.status();
  return serialize_artifact(graph, *kernels, options, summary);
}

absl::StatusOr<ArtifactSummary> write_artifact_for(const Context& ctx,
                                                   const BackendRegistry& backends,
                                                   const Graph& graph, const Placement& placement,
                                                   const std::filesystem::path& path,
                                                   const ArtifactOptions& options) {
  ArtifactSummary summary;
  auto bytes = compile_artifact(ctx, backends, graph, placement, options, &summary);
  if (!bytes.ok()) return bytes.status();
  auto writer = io::AtomicFileWriter::create(path);
  if (!writer.ok()) return writer.status();
  if (absl::Status s = (*writer)->write(*bytes); !s.ok()) return s;
  if (absl::Status s = (*writer)->commit(); !s.ok()) return s;
  return summary;
}

}  // namespace collage
