// Kernel wrapper around a runtime-module kernel instance.
#include "backends/common/module_kernel.h"

#include "backends/abi_status.h"
#include "core/str_cat.h"

namespace collage {
namespace {

class ModuleKernel : public Kernel {
 public:
  // `outputs`: the group's output types when its shapes depend on data (run_dynamic), else empty.
  ModuleKernel(const collage_rt_module_v1_t* module, KernelRecord record, void* instance,
               std::vector<TensorType> outputs)
      : module_(module), record_(std::move(record)), instance_(instance),
        dynamic_outputs_(std::move(outputs)) {}
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
  const collage_rt_module_v1_t* module_;
  KernelRecord record_;
  void* instance_;
  std::vector<TensorType> dynamic_outputs_;
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
    ptrs_.push_back(c.raw());
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
  // A group whose shapes depend on data runs through the module's kernel_run_dynamic.
  std::vector<TensorType> dynamic_outputs;
  bool dynamic = false;
  for (const TensorType& t : group_argument_types(group)) dynamic = dynamic || t.is_dynamic();
  if (dynamic) {
    if (!COLLAGE_RT_MODULE_HAS(module, kernel_run_dynamic)) {
      module->kernel_destroy(instance);
      return absl::InvalidArgumentError(str_cat(module->name, " cannot run '", record.entry,
                                                "': its shapes depend on data"));
    }
    for (ValueId v : group.outputs()) dynamic_outputs.push_back(group.value(v).type);
  }
  return std::unique_ptr<Kernel>(
      new ModuleKernel(module, std::move(record), instance, std::move(dynamic_outputs)));
}

}  // namespace collage
