// compile_placement and CompiledModel::run: builds each placed group with its backend, plans an
// arena for intermediate values (buffers reused once their last reader has run), runs the groups
// in order with each kernel's tasks spread over a thread pool.
#include "collage/executor.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "core/memory_plan.h"
#include "core/parallel_ranges.h"
#include "core/str_cat.h"

namespace collage {
namespace {

constexpr size_t kAlign = 64;

// Where a value of the parent graph lives during a run.
struct Location {
  // dynamic: written by a group with data-dependent shapes, held per run as a tensor of the size
  // it came out with.
  enum class Kind : uint8_t { none, input, constant, arena, output, dynamic };
  Kind kind = Kind::none;
  size_t index = 0;  // input: graph input number; output: output tensor number; arena: offset
  Tensor constant;
};

struct GroupExec {
  std::unique_ptr<Kernel> kernel;
  std::vector<ValueId> args;  // parent values: the group's inputs, then its outputs
  size_t num_inputs = 0;
  std::string label;          // for error messages
};

struct ArenaDeleter {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t{kAlign}); }
};

std::string group_label(const Graph& g, const PlacedGroup& group, size_t index) {
  std::string s = str_cat("group ", index, " (", group.backend, ":");
  std::vector<NodeId> nodes = group.nodes.to_vector();
  for (size_t i = 0; i < nodes.size() && i < 4; ++i) s += str_cat(" ", g.node(nodes[i]).name);
  if (nodes.size() > 4) s += str_cat(" and ", nodes.size() - 4, " more");
  return s + ")";
}

}  // namespace

struct CompiledModel::Impl {
  std::vector<TensorType> input_types;
  std::vector<std::string> input_names;
  std::vector<Location> locations;       // per parent value
  std::vector<TensorType> types;         // per parent value
  std::vector<std::string> names;        // per parent value
  bool has_dynamic = false;              // some group runs with data-dependent shapes
  std::vector<TensorType> output_types;  // per output tensor
  std::vector<ValueId> graph_outputs;
  std::vector<GroupExec> groups;
  std::vector<CompiledGroupInfo> info;
  size_t arena_bytes = 0, unshared_bytes = 0;
  std::unique_ptr<ThreadPool> own_pool;
  ThreadPool* pool = nullptr;
  // Arenas of finished runs, kept for the next: a fresh one costs a page fault per 4 KiB touched
  // (as many arenas as runs ever overlapped).
  mutable std::mutex arenas_mutex;
  using Arena = std::unique_ptr<uint8_t, ArenaDeleter>;
  mutable std::vector<Arena> spare_arenas;

  // An arena for one run: a spare one, or new.
  Arena take_arena() const {
    {
      std::lock_guard<std::mutex> lock(arenas_mutex);
      if (!spare_arenas.empty()) {
        Arena arena = std::move(spare_arenas.back());
        spare_arenas.pop_back();
        return arena;
      }
    }
    // One spare alignment unit: values of zero bytes may sit at the very end, and their pointers
    // must still be valid (kernels may not test for null).
    return Arena(new (std::align_val_t{kAlign}) uint8_t[arena_bytes + kAlign]);
  }
  // Gives the arena of a finished run back to the spares (held by a run for its whole length).
  struct ArenaLease {
    const Impl& owner;
    Arena arena;
    ~ArenaLease() {
      std::lock_guard<std::mutex> lock(owner.arenas_mutex);
      owner.spare_arenas.push_back(std::move(arena));
    }
  };

  absl::Status run_group(const GroupExec& g, void* const* args) const {
    const int32_t n = g.kernel->task_count();
    if (n <= 1) {
      absl::Status s = g.kernel->run_task(args, 0);
      return s.ok() ? s : absl::Status(s.code(), str_cat(g.label, ": ", s.message()));
    }
    std::mutex mu;
    absl::Status first;
    parallel_for_ranges(*pool, n, [&](int64_t t) {
      absl::Status s = g.kernel->run_task(args, static_cast<int32_t>(t));
      if (s.ok()) return;
      std::lock_guard<std::mutex> lock(mu);
      if (first.ok()) first = s;
    });
    if (first.ok()) return first;
    return absl::Status(first.code(), str_cat(g.label, ": ", first.message()));
  }
};

CompiledModel::CompiledModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledModel::CompiledModel(CompiledModel&&) noexcept = default;
CompiledModel& CompiledModel::operator=(CompiledModel&&) noexcept = default;
CompiledModel::~CompiledModel() = default;

const std::vector<CompiledGroupInfo>& CompiledModel::groups() const {
  return impl_->info;
}
size_t CompiledModel::arena_bytes() const {
  return impl_->arena_bytes;
}
size_t CompiledModel::unshared_bytes() const {
  return impl_->unshared_bytes;
}

absl::StatusOr<std::vector<Tensor>> CompiledModel::run(const std::vector<Tensor>& inputs) const {
  const Impl& m = *impl_;
  if (inputs.size() != m.input_types.size())
    return absl::InvalidArgumentError(
        str_cat("run: expected ", m.input_types.size(), " inputs, got ", inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty() || inputs[i].type() != m.input_types[i])
      return absl::InvalidArgumentError(str_cat(
          "run: input ", i, " '", m.input_names[i], "': expected ",
          type_to_string(m.input_types[i]), ", got ",
          inputs[i].empty() ? std::string("an empty tensor") : type_to_string(inputs[i].type())));
  }
  const Impl::ArenaLease lease{m, m.take_arena()};
  uint8_t* const arena = lease.arena.get();
  std::vector<Tensor> outs;
  for (const TensorType& t : m.output_types) outs.emplace_back(t.dtype, t.shape);
  std::vector<Tensor> dynamic(m.has_dynamic ? m.locations.size() : 0);

  auto pointer = [&](ValueId v) -> void* {
    const Location& l = m.locations[v];
    switch (l.kind) {
      case Location::Kind::input:
        return const_cast<void*>(inputs[l.index].raw());
      case Location::Kind::constant:
        return const_cast<void*>(l.constant.raw());
      case Location::Kind::arena:
        return arena + l.index;
      case Location::Kind::output:
        return outs[l.index].raw();
      case Location::Kind::dynamic:
        return dynamic[v].raw();
      case Location::Kind::none:
        break;
    }
    return nullptr;
  };
  std::vector<void*> args;
  std::vector<Tensor> group_inputs;
  for (const GroupExec& g : m.groups) {
    if (!g.kernel->dynamic_shapes()) {
      args.clear();
      for (ValueId v : g.args) args.push_back(pointer(v));
      absl::Status s = m.run_group(g, args.data());
      if (!s.ok()) return s;
      continue;
    }
    group_inputs.clear();
    for (size_t a = 0; a < g.num_inputs; ++a) {
      const ValueId v = g.args[a];
      const Location& l = m.locations[v];
      if (l.kind == Location::Kind::dynamic) group_inputs.push_back(dynamic[v]);
      else if (l.kind == Location::Kind::input) group_inputs.push_back(inputs[l.index]);
      else if (l.kind == Location::Kind::constant) group_inputs.push_back(l.constant);
      else group_inputs.push_back(Tensor::wrap(m.types[v].dtype, m.types[v].shape, pointer(v),
                                               nullptr));
    }
    auto produced = g.kernel->run_dynamic(group_inputs);
    if (!produced.ok())
      return absl::Status(produced.status().code(),
                          str_cat(g.label, ": ", produced.status().message()));
    if (produced->size() != g.args.size() - g.num_inputs)
      return absl::InternalError(str_cat(g.label, ": ", produced->size(), " outputs, ",
                                         g.args.size() - g.num_inputs, " expected"));
    for (size_t o = 0; o < produced->size(); ++o) {
      const ValueId v = g.args[g.num_inputs + o];
      if (!type_fits((*produced)[o].type(), m.types[v]))
        return absl::InvalidArgumentError(str_cat(
            g.label, ": '", m.names[v], "' is ", type_to_string((*produced)[o].type()),
            " at run time, but the model was compiled for ", type_to_string(m.types[v])));
      dynamic[v] = std::move((*produced)[o]);
    }
  }

  std::vector<Tensor> result;
  std::vector<bool> handed_out(outs.size(), false);
  for (ValueId v : m.graph_outputs) {
    const Location& l = m.locations[v];
    if (l.kind == Location::Kind::output && !handed_out[l.index]) {
      handed_out[l.index] = true;
      result.push_back(outs[l.index]);
    } else if (l.kind == Location::Kind::output) {
      result.push_back(outs[l.index].clone());
    } else if (l.kind == Location::Kind::input) {
      result.push_back(inputs[l.index].clone());
    } else if (l.kind == Location::Kind::dynamic) {
      result.push_back(dynamic[v]);
    } else {
      result.push_back(l.constant.clone());
    }
  }
  return result;
}

namespace {

// Every node of `graph` in exactly one group of `placement`.
absl::Status check_partition(const Graph& graph, const Placement& placement) {
  const size_t num_nodes = graph.nodes().size();
  std::vector<int> owner(num_nodes, -1);
  for (size_t i = 0; i < placement.groups.size(); ++i) {
    const PlacedGroup& group = placement.groups[i];
    if (group.nodes.universe() != num_nodes)
      return absl::InvalidArgumentError(str_cat("placement: group ", i, " is a node set of ",
                                                group.nodes.universe(), " nodes, the graph has ",
                                                num_nodes));
    if (group.nodes.empty())
      return absl::InvalidArgumentError(str_cat("placement: group ", i, " has no nodes"));
    for (NodeId n : group.nodes.to_vector()) {
      if (owner[n] >= 0)
        return absl::InvalidArgumentError(str_cat("placement: node '", graph.node(n).name,
                                                  "' is in group ", owner[n], " and group ", i));
      owner[n] = static_cast<int>(i);
    }
  }
  for (size_t n = 0; n < num_nodes; ++n)
    if (owner[n] < 0)
      return absl::InvalidArgumentError(
          str_cat("placement: node '", graph.node(n).name, "' is in no group"));
  return absl::OkStatus();
}

// Per parent value, the group that produces it and the last group that reads it (-1: none).
struct ValueUse {
  std::vector<int> produced_by, last_use;
};

// Builds group `i` with its backend into impl.groups and impl.info, noting in `use` what it
// reads and writes.
absl::Status build_group(const Context& ctx, const BackendRegistry& backends, const Graph& graph,
                         const PlacedGroup& group, size_t i, const BuildOptions& options,
                         std::span<const Layout> layouts, CompiledModel::Impl& impl,
                         ValueUse& use) {
  std::string label = group_label(graph, group, i);
  const Backend* backend = backends.find(group.backend);
  if (!backend)
    return absl::InvalidArgumentError(
        str_cat(label, ": no backend named '", group.backend, "' is registered"));
  auto sub = extract_subgraph(ctx, graph, group.nodes, layouts);
  if (!sub.ok())
    return absl::Status(sub.status().code(), str_cat(label, ": ", sub.status().message()));
  GroupExec exec;
  for (ValueId v : sub->parent_inputs) {
    if (impl.locations[v].kind != Location::Kind::input && use.produced_by[v] < 0)
      return absl::InvalidArgumentError(
          str_cat(label, " reads '", graph.value(v).name,
                  "' before any earlier group produces it (groups out of order, or a group is "
                  "not convex)"));
    use.last_use[v] = static_cast<int>(i);
    exec.args.push_back(v);
  }
  exec.num_inputs = exec.args.size();
  bool dynamic = false;
  for (ValueId v : exec.args) dynamic = dynamic || graph.value(v).type.is_dynamic();
  for (ValueId v : sub->parent_outputs) {
    use.produced_by[v] = static_cast<int>(i);
    exec.args.push_back(v);
    dynamic = dynamic || graph.value(v).type.is_dynamic();
  }
  auto kernel = backend->build(sub->graph, options);
  if (!kernel.ok())
    return absl::Status(kernel.status().code(),
                        str_cat(label, ": build failed: ", kernel.status().message()));
  if (dynamic && !(*kernel)->dynamic_shapes())
    return absl::InvalidArgumentError(str_cat(
        label, ": its shapes depend on data, which backend '", group.backend, "' cannot run"));
  if ((*kernel)->dynamic_shapes()) {
    impl.has_dynamic = true;
    for (ValueId v : sub->parent_outputs) impl.locations[v].kind = Location::Kind::dynamic;
  }
  exec.kernel = std::move(*kernel);
  exec.label = std::move(label);
  CompiledGroupInfo info;
  info.backend = group.backend;
  for (NodeId n : group.nodes.to_vector()) info.nodes.push_back(graph.node(n).name);
  info.task_count = exec.kernel->task_count();
  info.kernel_module = exec.kernel->record().module;
  impl.info.push_back(std::move(info));
  impl.groups.push_back(std::move(exec));
  return absl::OkStatus();
}

// Graph outputs not yet placed get their own tensors (constants are copied at the end of a run).
void place_outputs(const Graph& graph, CompiledModel::Impl& impl) {
  impl.graph_outputs = graph.outputs();
  for (ValueId v : graph.outputs()) {
    Location& l = impl.locations[v];
    if (l.kind != Location::Kind::none) continue;
    if (const Tensor* c = graph.constant_of(v)) {
      l.kind = Location::Kind::constant;
      l.constant = *c;
    } else {
      l.kind = Location::Kind::output;
      l.index = impl.output_types.size();
      impl.output_types.push_back(graph.value(v).type);
    }
  }
}

// Arena: values produced by one group and read by later ones, placed as an artifact places them
// (plan_memory over the groups' order), so that in process and as an artifact a placement runs
// on the same working set. (A slot per value chain that grew to its largest value, as here
// before, took DenseNet-121's 7.3 MiB to 32 MiB, past glibc's largest mmap threshold: every run
// mapped and faulted it in afresh, 70 ms against the artifact's 40.)
void plan_arena(const Graph& graph, const ValueUse& use, CompiledModel::Impl& impl) {
  std::vector<BufferLifetime> buffers;
  std::vector<ValueId> buffer_value;
  for (size_t i = 0; i < impl.groups.size(); ++i) {
    for (ValueId v : impl.groups[i].args) {
      if (use.produced_by[v] != static_cast<int>(i) ||
          impl.locations[v].kind != Location::Kind::none)
        continue;
      impl.locations[v].kind = Location::Kind::arena;
      buffers.push_back({graph.value(v).type.bytes(), static_cast<int32_t>(i),
                         std::max(use.last_use[v], static_cast<int32_t>(i))});
      buffer_value.push_back(v);
    }
  }
  const MemoryPlan plan = plan_memory(buffers, kAlign);
  for (size_t b = 0; b < buffers.size(); ++b)
    impl.locations[buffer_value[b]].index = plan.offsets[b];
  impl.arena_bytes = plan.peak_bytes;
  impl.unshared_bytes = plan.unshared_bytes;
}

}  // namespace

absl::StatusOr<CompiledModel> compile_placement(const Context& ctx, const BackendRegistry& backends,
                                                const Graph& graph, const Placement& placement,
                                                const BuildOptions& options, ThreadPool* pool) {
  if (absl::Status s = check_partition(graph, placement); !s.ok()) return s;
  auto impl = std::make_unique<CompiledModel::Impl>();
  impl->locations.resize(graph.values().size());
  for (const Value& v : graph.values()) {
    impl->types.push_back(v.type);
    impl->names.push_back(v.name);
  }
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    ValueId v = graph.inputs()[i];
    impl->locations[v].kind = Location::Kind::input;
    impl->locations[v].index = i;
    impl->input_types.push_back(graph.value(v).type);
    impl->input_names.push_back(graph.value(v).name);
  }
  const std::vector<Layout> layouts =
      assign_layouts(ctx, backends, graph, placement, channel_block(options));
  ValueUse use{std::vector<int>(graph.values().size(), -1),
               std::vector<int>(graph.values().size(), -1)};
  for (size_t i = 0; i < placement.groups.size(); ++i)
    if (absl::Status s = build_group(ctx, backends, graph, placement.groups[i], i, options,
                                     layouts, *impl, use);
        !s.ok())
      return s;
  place_outputs(graph, *impl);
  plan_arena(graph, use, *impl);

  if (pool) {
    impl->pool = pool;
  } else {
    int n = options.num_threads > 0 ? options.num_threads
                                    : static_cast<int>(std::thread::hardware_concurrency());
    impl->own_pool = std::make_unique<ThreadPool>(n);
    impl->pool = impl->own_pool.get();
  }
  return CompiledModel(std::move(impl));
}

}  // namespace collage
