// Kernel wrapper around a runtime-module kernel instance.
#include "backends/common/module_kernel.h"

#include <memory>

#include "backends/abi_status.h"
#include "core/str_cat.h"

namespace collage {
namespace {

// The runtime's view of a str tensor (collage_string_t elements) pointing into its std::strings.
std::vector<collage_string_t> string_views(const Tensor& t) {
  std::vector<collage_string_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const std::string& s = t.data<std::string>()[i];
    v.push_back({s.data(), s.size()});
  }
  return v;
}

// What a string kernel's run made: its outputs (str ones as collage_string_t arrays until they
// are copied into std::strings) and the bytes of their strings.
struct StringRun {
  const std::vector<TensorType>* types;
  std::vector<Tensor> outputs;
  std::vector<std::vector<collage_string_t>> views;  // per output; str outputs only
  std::vector<std::unique_ptr<char[]>> bytes;
};

void* string_run_alloc(void* ctx, int32_t index, const int64_t* shape) {
  auto& r = *static_cast<StringRun*>(ctx);
  if (index < 0 || static_cast<size_t>(index) >= r.outputs.size() || !shape) return nullptr;
  const TensorType& declared = (*r.types)[index];
  TensorType t{declared.dtype, Shape(shape, shape + declared.shape.size())};
  auto n = checked_shape_numel(t.shape);
  if (!type_fits(t, declared) || !n) return nullptr;
  r.outputs[index] = Tensor(t.dtype, t.shape);
  if (t.dtype != DType::str) return r.outputs[index].raw();
  r.views[index].reserve(1);  // a valid pointer for no elements too
  r.views[index].assign(static_cast<size_t>(*n), collage_string_t{nullptr, 0});
  return r.views[index].data();
}

void* string_run_bytes(void* ctx, uint64_t size) {
  auto& r = *static_cast<StringRun*>(ctx);
  return r.bytes.emplace_back(new char[size ? size : 1]).get();
}

class ModuleKernel : public Kernel {
 public:
  // `outputs`: the group's output types when its shapes depend on data (run_dynamic), else empty.
  ModuleKernel(const collage_rt_module_v1_t* module, KernelRecord record, void* instance,
               std::vector<TensorType> outputs, bool strings,
               std::vector<std::vector<collage_string_t>> constant_views)
      : module_(module), record_(std::move(record)), instance_(instance),
        dynamic_outputs_(std::move(outputs)), strings_(strings),
        constant_views_(std::move(constant_views)) {}
  ~ModuleKernel() override { module_->kernel_destroy(instance_); }

  int32_t task_count() const override { return module_->kernel_task_count(instance_); }

  absl::Status run_task(void* const* args, int32_t task_id) override {
    char err[512] = {0};
    if (const int32_t rc =
            module_->kernel_run(instance_, args, task_id, task_count(), err, sizeof err))
      return absl::Status(abi_status_code(rc, absl::StatusCode::kInternal),
                          str_cat(module_->name, " kernel '", record_.entry, "': ", err));
    return absl::OkStatus();
  }

  bool has_thread_team() const override {
    return COLLAGE_RT_MODULE_HAS(module_, kernel_run_threads);
  }

  absl::Status run_task_threads(void* const* args, int32_t task_id, int32_t max_threads) override {
    if (!has_thread_team()) return run_task(args, task_id);
    char err[512] = {0};
    if (const int32_t rc = module_->kernel_run_threads(instance_, args, task_id, task_count(),
                                                       max_threads, err, sizeof err))
      return absl::Status(abi_status_code(rc, absl::StatusCode::kInternal),
                          str_cat(module_->name, " kernel '", record_.entry, "' on ", max_threads,
                                  " threads: ", err));
    return absl::OkStatus();
  }

  const KernelRecord& record() const override { return record_; }

  bool dynamic_shapes() const override { return !dynamic_outputs_.empty(); }

  absl::StatusOr<std::vector<Tensor>> run_dynamic(const std::vector<Tensor>& inputs) override {
    if (strings_) return run_strings(inputs);
    std::vector<collage_rt_tensor_t> in;
    for (const Tensor& t : inputs) in.push_back({t.raw(), t.shape().data()});
    struct Made {
      const std::vector<TensorType>* types;
      std::vector<Tensor> outputs;
    } made{&dynamic_outputs_, std::vector<Tensor>(dynamic_outputs_.size())};
    auto alloc = [](void* ctx, int32_t index, const int64_t* shape) -> void* {
      auto& m = *static_cast<Made*>(ctx);
      if (index < 0 || static_cast<size_t>(index) >= m.outputs.size() || !shape) return nullptr;
      const TensorType& declared = (*m.types)[index];
      TensorType t{declared.dtype, Shape(shape, shape + declared.shape.size())};
      if (!type_fits(t, declared) || !checked_shape_numel(t.shape)) return nullptr;
      m.outputs[index] = Tensor(t.dtype, t.shape);
      return m.outputs[index].raw();
    };
    char err[512] = {0};
    if (const int32_t rc = module_->kernel_run_dynamic(
            instance_, in.data(), static_cast<int32_t>(in.size()), alloc, &made, err, sizeof err))
      return absl::Status(abi_status_code(rc, absl::StatusCode::kInvalidArgument),
                          str_cat(module_->name, " kernel '", record_.entry, "': ", err));
    for (size_t i = 0; i < made.outputs.size(); ++i)
      if (made.outputs[i].empty())
        return absl::InternalError(str_cat(module_->name, " kernel '", record_.entry,
                                           "' did not write output ", i));
    return std::move(made.outputs);
  }

 private:
  // A kernel with str values, through the module's kernel_run_strings: str tensors cross as
  // collage_string_t arrays, the outputs' strings are copied out of the run's bytes.
  absl::StatusOr<std::vector<Tensor>> run_strings(const std::vector<Tensor>& inputs) {
    std::vector<std::vector<collage_string_t>> views(inputs.size());
    std::vector<collage_rt_tensor_t> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      if (t.dtype() == DType::str) views[i] = string_views(t);
      in.push_back({t.dtype() == DType::str ? static_cast<const void*>(views[i].data()) : t.raw(),
                    t.shape().data()});
    }
    StringRun run{&dynamic_outputs_, std::vector<Tensor>(dynamic_outputs_.size()),
                  std::vector<std::vector<collage_string_t>>(dynamic_outputs_.size()), {}};
    char err[512] = {0};
    if (const int32_t rc = module_->kernel_run_strings(
            instance_, in.data(), static_cast<int32_t>(in.size()), string_run_alloc,
            string_run_bytes, &run, err, sizeof err))
      return absl::Status(abi_status_code(rc, absl::StatusCode::kInvalidArgument),
                          str_cat(module_->name, " kernel '", record_.entry, "': ", err));
    for (size_t i = 0; i < run.outputs.size(); ++i) {
      Tensor& t = run.outputs[i];
      if (t.empty())
        return absl::InternalError(str_cat(module_->name, " kernel '", record_.entry,
                                           "' did not write output ", i));
      if (t.dtype() != DType::str) continue;
      for (int64_t e = 0; e < t.numel(); ++e) {
        const collage_string_t& s = run.views[i][e];
        if (s.size) t.data<std::string>()[e].assign(s.data, s.size);
      }
    }
    return std::move(run.outputs);
  }

  const collage_rt_module_v1_t* module_;
  KernelRecord record_;
  void* instance_;
  std::vector<TensorType> dynamic_outputs_;
  bool strings_ = false;
  // The record's str constants as the module sees them: valid as long as the kernel.
  std::vector<std::vector<collage_string_t>> constant_views_;
};

}  // namespace

std::vector<TensorType> group_argument_types(const Graph& group) {
  std::vector<TensorType> types;
  for (ValueId v : group.inputs()) types.push_back(group.value(v).type);
  for (ValueId v : group.outputs()) types.push_back(group.value(v).type);
  return types;
}

KernelDesc::KernelDesc(const KernelRecord& record, const Graph& group) {
  auto desc_of = [](const TensorType& t) {
    return collage_tensor_desc_t{static_cast<int32_t>(t.dtype),
                                 static_cast<int32_t>(t.shape.size()), t.shape.data()};
  };
  for (ValueId v : group.inputs()) args_.push_back(desc_of(group.value(v).type));
  for (ValueId v : group.outputs()) args_.push_back(desc_of(group.value(v).type));
  for (const Tensor& c : record.constants) {
    consts_.push_back(desc_of(c.type()));
    if (c.dtype() == DType::str) {
      string_views_.push_back(string_views(c));
      ptrs_.push_back(string_views_.back().data());
    } else {
      ptrs_.push_back(c.raw());
    }
  }
  desc_.struct_size = sizeof desc_;
  desc_.entry = record.entry.c_str();
  desc_.params = record.params.data();
  desc_.params_size = record.params.size();
  desc_.num_args = static_cast<int32_t>(args_.size());
  desc_.args = args_.data();
  desc_.num_inputs = static_cast<int32_t>(group.inputs().size());
  desc_.num_constants = static_cast<int32_t>(ptrs_.size());
  desc_.constant_descs = consts_.data();
  desc_.constants = ptrs_.data();
}

absl::StatusOr<std::unique_ptr<Kernel>> make_module_kernel(const collage_rt_module_v1_t* module,
                                                           KernelRecord record,
                                                           const Graph& group) {
  KernelDesc desc(record, group);
  void* instance = nullptr;
  char err[512] = {0};
  const int32_t rc = module->kernel_create(&desc.desc(), &instance, err, sizeof err);
  if (rc != 0 || !instance) {
    if (instance) module->kernel_destroy(instance);
    return absl::Status(abi_status_code(rc, absl::StatusCode::kInvalidArgument),
                        str_cat(module->name, " cannot build '", record.entry, "': ", err));
  }
  // A group whose shapes depend on data runs through the module's kernel_run_dynamic; one with
  // str values through its kernel_run_strings.
  std::vector<TensorType> dynamic_outputs;
  bool dynamic = false, strings = false;
  for (const TensorType& t : group_argument_types(group)) {
    dynamic = dynamic || t.is_dynamic();
    strings = strings || t.dtype == DType::str;
  }
  for (const Tensor& c : record.constants) strings = strings || c.dtype() == DType::str;
  if (strings) {
    if (!COLLAGE_RT_MODULE_HAS(module, kernel_run_strings)) {
      module->kernel_destroy(instance);
      return absl::InvalidArgumentError(
          str_cat(module->name, " cannot run '", record.entry, "': it has string values"));
    }
    for (ValueId v : group.outputs()) dynamic_outputs.push_back(group.value(v).type);
  } else if (dynamic) {
    if (!COLLAGE_RT_MODULE_HAS(module, kernel_run_dynamic)) {
      module->kernel_destroy(instance);
      return absl::InvalidArgumentError(str_cat(module->name, " cannot run '", record.entry,
                                                "': its shapes depend on data"));
    }
    for (ValueId v : group.outputs()) dynamic_outputs.push_back(group.value(v).type);
  }
  return std::unique_ptr<Kernel>(new ModuleKernel(module, std::move(record), instance,
                                                  std::move(dynamic_outputs), strings,
                                                  desc.take_string_views()));
}

}  // namespace collage
