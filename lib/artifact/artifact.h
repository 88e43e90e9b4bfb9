// Writing artifacts: a placed graph built into runtime-module kernels, given a memory plan and
// serialized into the one file the runtime loads (docs/artifact-format.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/artifact.h"
#include "collage/backend.h"
#include "collage/context.h"
#include "collage/graph.h"
#include "collage/kernel.h"
#include "collage/placement.h"
#include "waves/artifact_schedule.h"

namespace collage {
namespace artifact {
class FileLayout;
}

// The module name of generated kernels: their code is the artifact's embedded shared object.
inline constexpr std::string_view kNativeModule = "native";

// One kernel of an artifact, in execution order.
struct ArtifactKernel {
  std::string name;     // the nodes it runs, for profiles and error messages
  std::string backend;  // the backend that built it
  KernelRecord record;
  int32_t task_count = 1;
  std::vector<ValueId> args;  // values of the graph: the kernel's inputs, then its outputs
  size_t num_inputs = 0;
  // The kernel itself (build_artifact_kernels keeps it), profiled and run for the wave schedule;
  // may be null (the schedule then assumes equal task times and measures nothing).
  std::shared_ptr<Kernel> kernel;
};

struct ArtifactOptions {
  BuildOptions build;
  // A shared object (the bytes of a linked .so) defining the entry symbol of every kernel whose
  // module is "native", with the kernel ABI of include/collage/runtime_module.h. Embedded as the
  // native-code section; required by serialize_artifact when a kernel is native. Left empty,
  // compile_artifact links the native kernels' object code (their records' params) into one.
  std::string native_library;
  // The wave schedule (docs/artifact-format.md): none by default. With one, the kernels are
  // written in the order of their dataflow waves and the memory plan keeps tensors of
  // overlapping waves apart, so that independent kernels can run side by side.
  waves::WaveOptions waves;
  // Threads building the native kernels side by side (build_artifact_kernels); 1: one build
  // after another. A build that times a choice (Backend::build_times_choices: a Winograd one
  // timed beside another build would be timed on a busy core) runs alone, before the others.
  int build_threads = 1;
};

// The wave-schedule choice that writes an artifact for a placement meant to run under `e`.
inline waves::ExecutorChoice wave_choice(PlacementExecutor e) {
  return e == PlacementExecutor::waves        ? waves::ExecutorChoice::waves
         : e == PlacementExecutor::sequential ? waves::ExecutorChoice::sequential
                                              : waves::ExecutorChoice::automatic;
}

// How the batch of a dynamic-batch artifact varies (docs/artifact-format.md#dynamic-batch).
struct DynamicBatchInfo {
  int64_t min = 0, max = 0;
  std::vector<int32_t> input_axes;   // per graph input: its batch axis, -1 when not batched
  std::vector<int32_t> output_axes;  // per graph output: likewise
  bool padded = false;  // a batch without its own plan runs on the next larger one, padded
};

// One plan of a dynamic-batch artifact: the model compiled for `batch` and its kernels.
struct BatchKernels {
  int64_t batch = 0;
  const Graph* graph = nullptr;
  std::vector<ArtifactKernel> kernels;
};

// A placed model compiled for one batch size.
struct PlacedBatch {
  int64_t batch = 0;
  const Graph* graph = nullptr;
  const Placement* placement = nullptr;
};
// A serialized artifact not yet put together in memory: the file laid out over its plan, its
// constants' own buffers and its native code, which the image keeps alive (constants shared with
// the graph are not copied). write_file streams it to disk; bytes() puts it together.
struct ArtifactImage {
  std::vector<std::shared_ptr<const std::string>> owned;  // plan, string tables, native code
  std::vector<Tensor> constants;  // the buffers the constants section is written from
  std::shared_ptr<const artifact::FileLayout> layout;  // over the two above

  uint64_t size() const;
  std::string bytes() const;
  // Writes the file to `path` atomically (a temporary file renamed over it), so a failed write
  // never leaves a partial artifact. Errors name the path.
  absl::Status write_file(const std::filesystem::path& path) const;
};

// Builds every group of `placement` (in its order, as validate_placement leaves it) with its
// backend and keeps each kernel's record and arguments. Errors name the group: a group on the
// reference backend (the runtime has no reference kernels), an unknown backend, a group that
// reads a value no earlier group produces, or the backend's build error (the first group's, in
// placement order). With `threads` > 1 the native kernels (LLVM's compiles, one thread each) are
// built on that many threads side by side, the other backends' on the calling thread. Without
// `records`, for an image that is only scored (its wave schedule), no kernel is asked for its
// record (an OpenVINO region's serializes its model and exports its compiled blob: 6-8 s for a
// transformer's): each record is its backend's name as the module and nothing else, so a
// plugin kernel without a runtime form is not refused.
absl::StatusOr<std::vector<ArtifactKernel>> build_artifact_kernels(
    const Context& ctx, const BackendRegistry& backends, const Graph& graph,
    const Placement& placement, const BuildOptions& options = {}, int threads = 1,
    bool records = true);

// The bytes of an artifact running `kernels` over `graph`: tensors, arena offsets (greedy best
// fit, see core/memory_plan.h), constants, the module list and the native code. Errors name
// the kernel or value at fault. `summary` (may be null) receives the figures.
absl::StatusOr<std::string> serialize_artifact(const Graph& graph,
                                               const std::vector<ArtifactKernel>& kernels,
                                               const ArtifactOptions& options = {},
                                               ArtifactSummary* summary = nullptr);
// serialize_artifact, not put together: the image of the same bytes.
absl::StatusOr<ArtifactImage> serialize_artifact_image(const Graph& graph,
                                                       const std::vector<ArtifactKernel>& kernels,
                                                       const ArtifactOptions& options = {},
                                                       ArtifactSummary* summary = nullptr);

// The bytes of a dynamic-batch artifact: one plan per entry of `plans` (batches ascending, the
// last one info.max, every graph with the same inputs and outputs), sharing one constants section
// (constants equal in content stored once) and one native library. The largest plan is the root,
// which a runtime without dynamic-batch support runs at that batch; the others are its variants.
absl::StatusOr<std::string> serialize_batch_artifact(const std::vector<BatchKernels>& plans,
                                                     const DynamicBatchInfo& info,
                                                     const ArtifactOptions& options = {},
                                                     ArtifactSummary* summary = nullptr);

// build_artifact_kernels for every batch, then serialize_batch_artifact, with the native kernels
// of every plan linked into the one library the artifact embeds (as compile_artifact does).
absl::StatusOr<std::string> compile_batch_artifact(const Context& ctx,
                                                   const BackendRegistry& backends,
                                                   const std::vector<PlacedBatch>& batches,
                                                   const DynamicBatchInfo& info,
                                                   const ArtifactOptions& options = {},
                                                   ArtifactSummary* summary = nullptr);

// build_artifact_kernels + serialize_artifact; when options.native_library is empty and some
// kernels are native, their object files are linked with the system linker (codegen/llvm/object.h)
// into the shared object the artifact embeds. Errors name a native kernel without object code or
// carry the linker's diagnostics.
absl::StatusOr<std::string> compile_artifact(const Context& ctx, const BackendRegistry& backends,
                                             const Graph& graph, const Placement& placement,
                                             const ArtifactOptions& options = {},
                                             ArtifactSummary* summary = nullptr);
// compile_artifact, not put together: the image of the same bytes (ArtifactImage::write_file
// writes a large model's constants to disk straight from its graph).
absl::StatusOr<ArtifactImage> compile_artifact_image(const Context& ctx,
                                                     const BackendRegistry& backends,
                                                     const Graph& graph,
                                                     const Placement& placement,
                                                     const ArtifactOptions& options = {},
                                                     ArtifactSummary* summary = nullptr);

// compile_artifact, written to `path` atomically (a temporary file renamed over it), so a failed
// write never leaves a partial artifact. The call `collage compile` makes.
absl::StatusOr<ArtifactSummary> write_artifact_for(const Context& ctx,
                                                   const BackendRegistry& backends,
                                                   const Graph& graph, const Placement& placement,
                                                   const std::filesystem::path& path,
                                                   const ArtifactOptions& options = {});

}  // namespace collage
