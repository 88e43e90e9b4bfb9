// The in-process executor of a placed graph: each group is cut out of the graph, built into a
// kernel by its backend, and run in placement order over a planned arena, each kernel's tasks
// spread over a thread pool. Also the `reference` backend, the fallback that can run any node.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/backend.h"
#include "collage/context.h"
#include "collage/graph.h"
#include "collage/placement.h"
#include "collage/thread_pool.h"

namespace collage {

// One compiled group, for reports and tests.
struct CompiledGroupInfo {
  std::string backend;
  std::vector<std::string> nodes;  // node names, in topological order
  int32_t task_count = 1;
  std::string kernel_module;  // KernelRecord::module
};

class CompiledModel {
 public:
  CompiledModel(CompiledModel&&) noexcept;
  CompiledModel& operator=(CompiledModel&&) noexcept;
  ~CompiledModel();

  // Runs the model: `inputs` are one tensor per graph input, in order, of exactly the input
  // types; returns freshly allocated outputs. Errors name the input or the group at fault.
  // Several threads may call run at once (each run has its own intermediate buffers).
  absl::StatusOr<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const;

  const std::vector<CompiledGroupInfo>& groups() const;
  // Bytes of the intermediate-value arena one run allocates (after liveness-based reuse), and the
  // bytes it would take with one buffer per value.
  size_t arena_bytes() const;
  size_t unshared_bytes() const;

  struct Impl;

 private:
  friend absl::StatusOr<CompiledModel> compile_placement(const Context&, const BackendRegistry&,
                                                         const Graph&, const Placement&,
                                                         const BuildOptions&, ThreadPool*);
  explicit CompiledModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Builds every group of `placement` (groups in executable order, as validate_placement leaves
// them) with its backend. Tasks run on `pool` when given (borrowed; it must outlive the model),
// else on a pool the model owns with options.num_threads threads (0: one per core). The backends
// must outlive the model; the graph need not. Errors name the group: an unknown backend, a node
// covered twice or never, a group that reads a value no earlier group produces, or the backend's
// build error.
absl::StatusOr<CompiledModel> compile_placement(const Context& ctx, const BackendRegistry& backends,
                                                const Graph& graph, const Placement& placement,
                                                const BuildOptions& options = {},
                                                ThreadPool* pool = nullptr);

// The channel block BuildOptions::channel_block -1 picks: 16, one AVX-512 vector (two AVX2 ones).
// The command-line tools pick the target's own, native_channel_block (8 on AVX2).
inline constexpr int32_t kDefaultChannelBlock = 16;
// The channel block `options` asks for (BuildOptions::channel_block, -1 resolved).
int32_t channel_block(const BuildOptions& options);

// The layout of every value of `graph` placed as `placement`, indexed by value id: channel-blocked
// by `c_block` where a value passes from one group to others and the producing group's backend
// and every reading group's backend accept it blocked (Backend::accepts_layout), so that
// consecutive convolutions of the native backend exchange blocked data; plain elsewhere: graph
// inputs and outputs, constants, values that do not fit the block, values a group on either side
// takes only plain (the layout changes there, inside the kernels on the blocked side, and the
// end-to-end measurement of the placement pays for it), values of a group whose backend is not
// registered or that cannot be cut out (compile_placement reports those). `c_block` 0: every
// value plain.
std::vector<Layout> assign_layouts(const Context& ctx, const BackendRegistry& backends,
                                   const Graph& graph, const Placement& placement,
                                   int32_t c_block);

// The name of the reference backend.
inline constexpr std::string_view kReferenceBackend = "reference";
// A backend whose kernels run their group with run_reference (one task). Its pattern rule offers
// every node as a candidate of its own, so it can take any node a faster backend leaves.
std::unique_ptr<Backend> make_reference_backend();

}  // namespace collage
