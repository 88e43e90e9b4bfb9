// Kernel wrapper around a runtime-module kernel instance.
#include "backends/common/module_kernel.h"

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
    if (module_->kernel_run(instance_, args, task_id, task_count(), err, sizeof err) != 0)
      return absl::InternalError(str_cat(module_->name, " kernel '", record_.entry, "': ", err));
    return absl::OkStatus();
  }

  bool has_thread_team() const override {
    return COLLAGE_RT_MODULE_HAS(module_, kernel_run_threads);
  }

  absl::Status run_task_threads(void* const* args, int32_t task_id,
                                int32_t max_threads) override {
    if (!has_thread_team()) return run_task(args, task_id);
    char err[512] = {0};
    if (module_->kernel_run_threads(instance_, args, task_id, task_count(), max_threads, err,
                                    sizeof err) != 0)
      return absl::InternalError(str_cat(module_->name, " kernel '", record_.entry, "' on ",
                                         max_threads, " threads: ", err));
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
    if (module_->kernel_run_dynamic(instance_, in.data(), static_cast<int32_t>(in.size()), alloc,
                                    &made, err, sizeof err) != 0)
      return absl::InvalidArgumentError(str_cat(module_->name, " kernel '", record_.entry,
                                                "': ", err));
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

absl::StatusOr<std::unique_ptr<Kernel>> make_module_kernel(const collage_rt_module_v1_t* module,
                                                           KernelRecord record,
                                                           const Graph& group) {
  std::vector<TensorType> types = group_argument_types(group);
  std::vector<collage_tensor_desc_t> args;
  for (const TensorType& t : types)
    args.push_back({static_cast<int32_t>(t.dtype), static_cast<int32_t>(t.shape.size()),
                    t.shape.data()});
  std::vector<collage_tensor_desc_t> const_descs;
  std::vector<const void*> const_ptrs;
  for (const Tensor& c : record.constants) {
    const_descs.push_back({static_cast<int32_t>(c.dtype()), static_cast<int32_t>(c.rank()),
                           c.shape().data()});
    const_ptrs.push_back(c.raw());
  }
  collage_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.entry = record.entry.c_str();
  desc.params = record.params.data();
  desc.params_size = record.params.size();
  desc.num_args = static_cast<int32_t>(args.size());
  desc.args = args.data();
  desc.num_inputs = static_cast<int32_t>(group.inputs().size());
  desc.num_constants = static_cast<int32_t>(const_ptrs.size());
  desc.constant_descs = const_descs.data();
  desc.constants = const_ptrs.data();
  void* instance = nullptr;
  char err[512] = {0};
  if (module->kernel_create(&desc, &instance, err, sizeof err) != 0 || !instance)
    return absl::InvalidArgumentError(
        str_cat(module->name, " cannot build '", record.entry, "': ", err));
  // A group whose shapes depend on data runs through the module's kernel_run_dynamic.
  std::vector<TensorType> dynamic_outputs;
  bool dynamic = false;
  for (const TensorType& t : types) dynamic = dynamic || t.is_dynamic();
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
