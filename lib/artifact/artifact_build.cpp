// build_artifact_kernels, compile_artifact and write_artifact_for: each placed group is cut out of
// the graph and built by its backend; the kernel's record is what the artifact stores, and native
// kernels' object code is linked into the shared object the artifact embeds.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "artifact/artifact.h"
#include "codegen/llvm/object.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "core/str_cat.h"

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

// A temporary directory removed with everything in it when the object goes away.
class TempDir {
 public:
  static absl::StatusOr<TempDir> create() {
    std::string pattern = (std::filesystem::temp_directory_path() / "collage-link-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      return absl::InternalError(str_cat("cannot create a temporary directory like ", pattern));
    return TempDir(pattern);
  }
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TempDir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
};

// The shared object defining every native kernel's entry: their object files (the records'
// params; kernels with the same entry have the same code and are linked once) linked with the
// system linker. Empty when no kernel is native.
absl::StatusOr<std::string> link_native_code(const std::vector<ArtifactKernel>& kernels) {
  std::set<std::string> entries;
  std::optional<TempDir> dir;
  std::vector<std::string> objects;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const KernelRecord& r = kernels[k].record;
    if (r.module != kNativeModule || !entries.insert(r.entry).second) continue;
    if (r.params.empty())
      return absl::InternalError(str_cat("kernel ", k, " (", kernels[k].name,
                                         "): the native backend produced no object code for '",
                                         r.entry, "'"));
    if (!dir) {
      auto d = TempDir::create();
      if (!d.ok()) return d.status();
      dir.emplace(std::move(*d));
    }
    const std::string path = (dir->path() / str_cat("k", objects.size(), ".o")).string();
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(r.params.data()),
            static_cast<std::streamsize>(r.params.size()));
    if (!f) return absl::InternalError(str_cat("cannot write the object file ", path));
    objects.push_back(path);
  }
  if (objects.empty()) return std::string();
  const std::string so = (dir->path() / "native.so").string();
  if (absl::Status s = codegen::link_shared_library(objects, so, codegen::TargetSpec::host());
      !s.ok())
    return s;
  std::ifstream in(so, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return absl::InternalError(str_cat("cannot read the linked native code ", so));
  return bytes.str();
}

}  // namespace

absl::StatusOr<std::vector<ArtifactKernel>> build_artifact_kernels(
    const Context& ctx, const BackendRegistry& backends, const Graph& graph,
    const Placement& placement, const BuildOptions& options, int threads, bool records) {
  const size_t num_nodes = graph.nodes().size();
  std::vector<ArtifactKernel> kernels;
  std::vector<bool> available(graph.values().size(), false);
  for (ValueId v : graph.inputs()) available[v] = true;
  const std::vector<Layout> layouts =
      assign_layouts(ctx, backends, graph, placement, channel_block(options));
  // First every group cut out and its arguments found (up to the first group that fails), then
  // the builds, then the first error in group order: the build error of an earlier group, else
  // the failure that stopped the cutting.
  struct Pending {
    std::string label;
    const Backend* backend = nullptr;
    Graph graph;
    absl::StatusOr<std::unique_ptr<Kernel>> built = absl::UnknownError("not built");
  };
  std::vector<Pending> pending;
  absl::Status cut_failure;
  for (size_t i = 0; i < placement.groups.size() && cut_failure.ok(); ++i) {
    const PlacedGroup& group = placement.groups[i];
    if (group.nodes.universe() != num_nodes || group.nodes.empty()) {
      cut_failure = absl::InvalidArgumentError(
          str_cat("placement: group ", i, " is not a non-empty node set of this graph"));
      break;
    }
    const std::string nodes = group_nodes(graph, group);
    const std::string label = str_cat("group ", i, " (", group.backend, ": ", nodes, ")");
    if (group.backend == kReferenceBackend) {
      cut_failure = absl::InvalidArgumentError(
          str_cat(label,
                  " is placed on the reference backend, which has no runtime module: an artifact "
                  "needs every node on a backend with one (native, eigen, dnnl, ...)"));
      break;
    }
    const Backend* backend = backends.find(group.backend);
    if (!backend) {
      cut_failure = absl::InvalidArgumentError(
          str_cat(label, ": no backend named '", group.backend, "' is registered"));
      break;
    }
    auto sub = extract_subgraph(ctx, graph, group.nodes, layouts);
    if (!sub.ok()) {
      cut_failure = absl::Status(sub.status().code(), str_cat(label, ": ", sub.status().message()));
      break;
    }
    ArtifactKernel k;
    k.name = nodes;
    k.backend = group.backend;
    for (ValueId v : sub->parent_inputs) {
      if (!available[v]) {
        cut_failure = absl::InvalidArgumentError(
            str_cat(label, " reads '", graph.value(v).name,
                    "' before any earlier group produces it (groups out of order)"));
        break;
      }
      k.args.push_back(v);
    }
    if (!cut_failure.ok()) break;
    k.num_inputs = k.args.size();
    for (ValueId v : sub->parent_outputs) {
      available[v] = true;
      k.args.push_back(v);
    }
    kernels.push_back(std::move(k));
    pending.push_back({label, backend, std::move(sub->graph)});
  }
  const auto build = [&](Pending& p) { p.built = p.backend->build(p.graph, options); };
  if (threads <= 1) {
    for (Pending& p : pending) build(p);
  } else {
    // Native kernels taken in turn by `threads` threads (the calling one among them, once it has
    // built the other backends' kernels, which keep to the calling thread). A build that times a
    // choice (Backend::build_times_choices) runs first, alone.
    std::vector<Pending*> native, others;
    for (Pending& p : pending) {
      if (p.backend->build_times_choices(p.graph, options))
        build(p);
      else
        (p.backend->name() == kNativeBackend ? native : others).push_back(&p);
    }
    std::atomic<size_t> next{0};
    const auto take_native = [&] {
      for (size_t i; (i = next.fetch_add(1)) < native.size();) build(*native[i]);
    };
    std::vector<std::thread> workers;
    for (int t = 1; t < threads && static_cast<size_t>(t) < native.size(); ++t)
      workers.emplace_back(take_native);
    for (Pending* p : others) build(*p);
    take_native();
    for (std::thread& w : workers) w.join();
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    ArtifactKernel& k = kernels[i];
    if (!p.built.ok())
      return absl::Status(p.built.status().code(),
                          str_cat(p.label, ": build failed: ", p.built.status().message()));
    k.record = records ? (*p.built)->record() : KernelRecord{k.backend, "", {}, {}};
    k.task_count = (*p.built)->task_count();
    k.kernel = std::shared_ptr<Kernel>(*std::move(p.built));
    if (k.record.module == kReferenceBackend)
      return absl::InvalidArgumentError(str_cat(
          p.label, ": its kernel runs on the reference module, which the runtime does not have"));
    if (k.record.module.empty())
      return absl::InvalidArgumentError(
          str_cat(p.label, ": backend '", k.backend,
                  "' gives its kernels no runtime form (a plugin without kernel_record), so they "
                  "run in process only and cannot go into an artifact"));
  }
  if (!cut_failure.ok()) return cut_failure;
  return kernels;
}

absl::StatusOr<std::string> compile_artifact(const Context& ctx, const BackendRegistry& backends,
                                             const Graph& graph, const Placement& placement,
                                             const ArtifactOptions& options,
                                             ArtifactSummary* summary) {
  auto image = compile_artifact_image(ctx, backends, graph, placement, options, summary);
  if (!image.ok()) return image.status();
  return image->bytes();
}

absl::StatusOr<ArtifactImage> compile_artifact_image(const Context& ctx,
                                                     const BackendRegistry& backends,
                                                     const Graph& graph,
                                                     const Placement& placement,
                                                     const ArtifactOptions& options,
                                                     ArtifactSummary* summary) {
  auto kernels =
      build_artifact_kernels(ctx, backends, graph, placement, options.build, options.build_threads);
  if (!kernels.ok()) return kernels.status();
  if (!options.native_library.empty())
    return serialize_artifact_image(graph, *kernels, options, summary);
  // Native kernels' code: linked here into the shared object the artifact embeds.
  auto native = link_native_code(*kernels);
  if (!native.ok()) return native.status();
  ArtifactOptions with_code = options;
  with_code.native_library = std::move(*native);
  return serialize_artifact_image(graph, *kernels, with_code, summary);
}

absl::StatusOr<std::string> compile_batch_artifact(const Context& ctx,
                                                   const BackendRegistry& backends,
                                                   const std::vector<PlacedBatch>& batches,
                                                   const DynamicBatchInfo& info,
                                                   const ArtifactOptions& options,
                                                   ArtifactSummary* summary) {
  std::vector<BatchKernels> plans;
  std::vector<ArtifactKernel> all;  // every plan's kernels, for the native library
  for (const PlacedBatch& b : batches) {
    auto kernels = build_artifact_kernels(ctx, backends, *b.graph, *b.placement, options.build);
    if (!kernels.ok())
      return absl::Status(kernels.status().code(),
                          str_cat("batch ", b.batch, ": ", kernels.status().message()));
    all.insert(all.end(), kernels->begin(), kernels->end());
    plans.push_back({b.batch, b.graph, std::move(*kernels)});
  }
  ArtifactOptions with_code = options;
  if (with_code.native_library.empty()) {
    auto native = link_native_code(all);
    if (!native.ok()) return native.status();
    with_code.native_library = std::move(*native);
  }
  return serialize_batch_artifact(plans, info, with_code, summary);
}

absl::StatusOr<ArtifactSummary> write_artifact_for(const Context& ctx,
                                                   const BackendRegistry& backends,
                                                   const Graph& graph, const Placement& placement,
                                                   const std::filesystem::path& path,
                                                   const ArtifactOptions& options) {
  ArtifactSummary summary;
  auto image = compile_artifact_image(ctx, backends, graph, placement, options, &summary);
  if (!image.ok()) return image.status();
  if (absl::Status s = image->write_file(path); !s.ok()) return s;
  return summary;
}

}  // namespace collage
