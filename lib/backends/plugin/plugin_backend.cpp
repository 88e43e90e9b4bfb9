// load_backend_plugin: a Backend over a plugin's collage_backend_v1 table, and its kernels.
#include <dlfcn.h>

#include <cstddef>
#include <cstring>

#include "backends/abi_status.h"
#include "backends/plugin/group_view.h"
#include "collage/backend_loader.h"
#include "core/str_cat.h"

namespace collage {
namespace {

constexpr size_t kErrSize = 1024;

// The loaded library and its table; shared by the backend and every kernel it built, so the code
// stays mapped while any of them is alive.
struct Plugin {
  std::string path;
  void* handle = nullptr;
  const collage_backend_v1_t* table = nullptr;
  std::string name;  // "plugin 'mygemm' (/path/libmygemm.so)", for messages
  ~Plugin() {
    if (handle) dlclose(handle);
  }
};

// An error naming the plugin; `rc` is the code the plugin returned (runtime_module.h's error
// convention), 0 when collage found the fault itself.
absl::Status plugin_error(const Plugin& p, std::string_view what, const char* err, int32_t rc = 0) {
  return absl::Status(
      abi_status_code(rc, absl::StatusCode::kInvalidArgument),
      str_cat(p.name, ": ", what, err && *err ? str_cat(": ", err) : std::string()));
}

DLDataType dl_dtype(DType d) {
  switch (d) {
    case DType::f32:
      return {kDLFloat, 32, 1};
    case DType::f16:
      return {kDLFloat, 16, 1};
    case DType::bf16:
      return {kDLBfloat, 16, 1};
    case DType::i8:
      return {kDLInt, 8, 1};
    case DType::i32:
      return {kDLInt, 32, 1};
    case DType::i64:
      return {kDLInt, 64, 1};
    case DType::boolean:
      return {kDLUInt, 8, 1};  // one byte per element; DLPack 0.6 has no bool
    case DType::f64:
      return {kDLFloat, 64, 1};
    case DType::i16:
      return {kDLInt, 16, 1};
    case DType::u8:
      return {kDLUInt, 8, 1};
    case DType::u16:
      return {kDLUInt, 16, 1};
    case DType::u32:
      return {kDLUInt, 32, 1};
    case DType::u64:
      return {kDLUInt, 64, 1};
    case DType::str:
      break;  // DLPack has no strings; string operators are not offered to plugins
  }
  return {kDLOpaqueHandle, 0, 0};
}

class PluginKernel : public Kernel {
 public:
  PluginKernel(std::shared_ptr<const Plugin> plugin, void* kernel, Graph group)
      : plugin_(std::move(plugin)), kernel_(kernel), group_(std::move(group)) {
    for (ValueId v : group_.inputs()) add_arg(v);
    for (ValueId v : group_.outputs()) add_arg(v);
  }
  ~PluginKernel() override { plugin_->table->kernel_destroy(kernel_); }

  // Checks the task count and the output types the plugin reports against the group, and takes
  // the kernel's record (how the plugin's runtime module re-creates it) when the plugin has one.
  absl::Status verify() {
    if (absl::Status s = take_record(); !s.ok()) return s;
    task_count_ = plugin_->table->kernel_task_count(kernel_);
    if (task_count_ < 1)
      return plugin_error(
          *plugin_, str_cat("kernel_task_count returned ", task_count_, " (must be at least 1)"),
          nullptr);
    for (size_t i = 0; i < group_.outputs().size(); ++i) {
      const Value& out = group_.value(group_.outputs()[i]);
      int32_t dtype = -1, rank = -1;
      int64_t shape[COLLAGE_PLUGIN_MAX_RANK] = {};
      char err[kErrSize] = "";
      if (const int32_t rc = plugin_->table->kernel_output_type(
              kernel_, static_cast<int32_t>(i), &dtype, &rank, shape, err, kErrSize))
        return plugin_error(*plugin_, str_cat("kernel_output_type(", i, ") failed"), err, rc);
      bool same = dtype == dtype_code(out.type.dtype) &&
                  rank == static_cast<int32_t>(out.type.shape.size()) &&
                  rank <= COLLAGE_PLUGIN_MAX_RANK;
      for (int32_t d = 0; same && d < rank; ++d) same = shape[d] == out.type.shape[d];
      if (!same) {
        std::string got = "?";
        if (dtype >= 0 && dtype <= static_cast<int32_t>(DType::boolean) && rank >= 0 &&
            rank <= COLLAGE_PLUGIN_MAX_RANK)
          got = type_to_string({static_cast<DType>(dtype), Shape(shape, shape + rank)});
        return plugin_error(*plugin_,
                            str_cat("kernel output ", i, " would be ", got,
                                    ", but the group's "
                                    "output '",
                                    out.name, "' is ", type_to_string(out.type)),
                            nullptr);
      }
    }
    return absl::OkStatus();
  }

  int32_t task_count() const override { return task_count_; }

  absl::Status run_task(void* const* args, int32_t task_id) override {
    std::vector<DLTensor> tensors(templates_);
    for (size_t i = 0; i < tensors.size(); ++i) tensors[i].data = args[i];
    char err[kErrSize] = "";
    int32_t rc;
    try {
      rc = plugin_->table->kernel_run(kernel_, tensors.data(), static_cast<int32_t>(tensors.size()),
                                      task_id, task_count_, err, kErrSize);
    } catch (...) {
      return plugin_error(*plugin_, "kernel_run threw an exception", nullptr);
    }
    if (rc != 0)
      return plugin_error(*plugin_, str_cat("kernel_run(task ", task_id, ") failed"), err, rc);
    return absl::OkStatus();
  }

  const KernelRecord& record() const override { return record_; }

 private:
  // record_.module is the plugin's name: the runtime opens libcollage_rt_<name>.so. Without
  // kernel_record the kernel has no runtime form: the module stays empty, and the artifact writer
  // refuses the kernel.
  absl::Status take_record() {
    const collage_backend_v1_t* t = plugin_->table;
    if (!COLLAGE_BACKEND_HAS(t, kernel_record)) return absl::OkStatus();
    record_.module = t->name;
    collage_kernel_record_t r{};
    r.struct_size = sizeof r;
    char err[kErrSize] = "";
    int32_t rc;
    try {
      rc = t->kernel_record(kernel_, &r, err, kErrSize);
    } catch (...) {
      return plugin_error(*plugin_, "kernel_record threw an exception", nullptr);
    }
    if (rc != 0) return plugin_error(*plugin_, "kernel_record failed", err, rc);
    if (!r.entry || (r.params_size && !r.params) || r.num_constants < 0 ||
        (r.num_constants && (!r.constant_descs || !r.constants)))
      return plugin_error(*plugin_, "kernel_record gave no entry, or a NULL list", nullptr);
    record_.entry = r.entry;
    record_.params.assign(r.params, r.params + r.params_size);
    for (int32_t i = 0; i < r.num_constants; ++i) {
      const collage_tensor_desc_t& d = r.constant_descs[i];
      if (d.dtype < 0 || d.dtype > static_cast<int32_t>(DType::boolean) || d.rank < 0 ||
          (d.rank && !d.shape) || !r.constants[i])
        return plugin_error(*plugin_, str_cat("kernel_record: constant ", i, " is malformed"),
                            nullptr);
      Tensor c(static_cast<DType>(d.dtype), Shape(d.shape, d.shape + d.rank));
      std::memcpy(c.raw(), r.constants[i], c.bytes());
      record_.constants.push_back(std::move(c));
    }
    return absl::OkStatus();
  }

  void add_arg(ValueId v) {
    const TensorType& t = group_.value(v).type;
    DLTensor d{};
    d.device = {kDLCPU, 0};
    d.ndim = static_cast<int>(t.shape.size());
    d.dtype = dl_dtype(t.dtype);
    // DLTensor's shape is non-const by declaration; plugins only read it.
    d.shape = const_cast<int64_t*>(t.shape.data());
    templates_.push_back(d);
  }

  std::shared_ptr<const Plugin> plugin_;
  void* kernel_;
  Graph group_;  // keeps the constants handed to the plugin alive
  std::vector<DLTensor> templates_;
  int32_t task_count_ = 1;
  KernelRecord record_;
};

// Values of `nodes` read outside them or returned by g, as extract_subgraph makes outputs.
std::vector<ValueId> escaping_values(const Graph& g, const NodeSet& nodes) {
  std::vector<bool> is_output(g.values().size(), false);
  for (ValueId v : g.outputs()) is_output[v] = true;
  std::vector<ValueId> out;
  for (NodeId n : nodes.to_vector()) {
    for (ValueId v : g.node(n).outputs) {
      bool escapes = is_output[v];
      for (NodeId u : g.users()[v]) escapes |= !nodes.contains(u);
      if (escapes) out.push_back(v);
    }
  }
  return out;
}

class PluginBackend : public Backend {
 public:
  PluginBackend(std::shared_ptr<const Plugin> plugin, std::vector<Pattern> patterns)
      : Backend(plugin->table->name,
                plugin->table->device == COLLAGE_DEVICE_CUDA ? DeviceKind::cuda : DeviceKind::cpu,
                plugin->table->version),
        plugin_(std::move(plugin)) {
    const collage_backend_v1_t* t = plugin_->table;
    for (int32_t i = 0; i < t->num_patterns; ++i) {
      PatternCheck check;
      if (t->check) {
        check = [p = plugin_, i](const Graph& g, const PatternMatch& m) -> absl::Status {
          std::vector<ValueId> inputs;
          for (ValueId v : m.inputs)
            if (!g.constant_of(v)) inputs.push_back(v);
          GroupView view(g, m.nodes, inputs, escaping_values(g, m.nodes));
          char err[kErrSize] = "";
          int32_t rc;
          try {
            rc = p->table->check(p->table->user_data, i, view.get(), err, kErrSize);
          } catch (...) {
            return plugin_error(*p, "check threw an exception", nullptr);
          }
          if (rc != 0) return plugin_error(*p, "rejected the match", err, rc);
          return absl::OkStatus();
        };
      }
      add_pattern(t->patterns[i].name, std::move(patterns[i]), std::move(check));
    }
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    NodeSet all(group.nodes().size());
    for (NodeId n = 0; n < static_cast<NodeId>(group.nodes().size()); ++n) all.insert(n);
    GroupView view(group, all, group.inputs(), group.outputs());
    void* kernel = nullptr;
    char err[kErrSize] = "";
    int32_t rc;
    try {
      rc = plugin_->table->build(plugin_->table->user_data, view.get(), &kernel, err, kErrSize);
    } catch (...) {
      return plugin_error(*plugin_, "build threw an exception", nullptr);
    }
    if (rc != 0) {
      if (kernel) plugin_->table->kernel_destroy(kernel);
      return plugin_error(*plugin_, "build failed", err, rc);
    }
    if (!kernel) return plugin_error(*plugin_, "build returned success but no kernel", nullptr);
    auto k = std::make_unique<PluginKernel>(plugin_, kernel, group);
    if (absl::Status s = k->verify(); !s.ok()) return s;
    return k;
  }

 private:
  std::shared_ptr<const Plugin> plugin_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> load_backend_plugin(const std::string& path) {
  auto plugin = std::make_shared<Plugin>();
  plugin->path = path;
  plugin->name = str_cat("backend plugin '", path, "'");
  plugin->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!plugin->handle) {
    const char* e = dlerror();
    return absl::InvalidArgumentError(
        str_cat(plugin->name, ": cannot load: ", e ? e : "unknown error"));
  }
  dlerror();
  auto get =
      reinterpret_cast<collage_backend_v1_get_fn>(dlsym(plugin->handle, COLLAGE_BACKEND_V1_ENTRY));
  if (!get)
    return plugin_error(
        *plugin, str_cat("no symbol ", COLLAGE_BACKEND_V1_ENTRY, " (not a collage backend plugin)"),
        nullptr);
  const collage_backend_v1_t* t = get();
  if (!t)
    return plugin_error(*plugin, str_cat(COLLAGE_BACKEND_V1_ENTRY, " returned NULL"), nullptr);
  if (t->struct_size < COLLAGE_BACKEND_V1_BASE_SIZE)
    return plugin_error(*plugin,
                        str_cat("table struct_size ", t->struct_size, " is smaller than ",
                                COLLAGE_BACKEND_V1_BASE_SIZE,
                                " (collage_backend_v1_t's first version)"),
                        nullptr);
  if (t->abi_version != COLLAGE_BACKEND_ABI_VERSION)
    return plugin_error(*plugin,
                        str_cat("ABI version ", t->abi_version, ", this collage supports ",
                                COLLAGE_BACKEND_ABI_VERSION),
                        nullptr);
  if (!t->name || !*t->name) return plugin_error(*plugin, "the table has no name", nullptr);
  plugin->name = str_cat("backend plugin '", t->name, "' (", path, ")");
  if (!t->version) return plugin_error(*plugin, "the table has no version", nullptr);
  if (t->device != COLLAGE_DEVICE_CPU && t->device != COLLAGE_DEVICE_CUDA)
    return plugin_error(*plugin, str_cat("unknown device ", t->device), nullptr);
  const std::pair<const char*, bool> callbacks[] = {
      {"build", t->build != nullptr},
      {"kernel_output_type", t->kernel_output_type != nullptr},
      {"kernel_task_count", t->kernel_task_count != nullptr},
      {"kernel_run", t->kernel_run != nullptr},
      {"kernel_destroy", t->kernel_destroy != nullptr}};
  for (const auto& [name, present] : callbacks)
    if (!present) return plugin_error(*plugin, str_cat("missing callback ", name), nullptr);
  if (t->num_patterns < 0 || (t->num_patterns > 0 && !t->patterns))
    return plugin_error(*plugin, "bad pattern list", nullptr);
  std::vector<Pattern> patterns;
  for (int32_t i = 0; i < t->num_patterns; ++i) {
    const collage_backend_pattern_t& p = t->patterns[i];
    if (!p.name || !p.pattern)
      return plugin_error(*plugin, str_cat("pattern ", i, " has no name or no text"), nullptr);
    auto parsed = parse_pattern(p.pattern);
    if (!parsed.ok())
      return plugin_error(*plugin, str_cat("pattern '", p.name, "'"),
                          std::string(parsed.status().message()).c_str());
    patterns.push_back(std::move(*parsed));
  }
  plugin->table = t;
  return std::unique_ptr<Backend>(new PluginBackend(std::move(plugin), std::move(patterns)));
}

}  // namespace collage
