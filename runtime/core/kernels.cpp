// Module kernels (through a collage_rt_module_v1_t table) and native kernels (a function pointer).
#include "kernels.h"

#include <algorithm>
#include <vector>

namespace collage::rt {
namespace {

std::string kernel_label(const Program& p, size_t k) {
  return cat("kernel ", k, " (", p.kernels[k].backend, ": ", p.kernels[k].name, ")");
}

class ModuleKernel : public KernelInstance {
 public:
  ModuleKernel(const collage_rt_module_v1_t* module, void* instance, int32_t tasks,
               std::string label)
      : module_(module), instance_(instance), tasks_(tasks), label_(std::move(label)) {}
  ~ModuleKernel() override { module_->kernel_destroy(instance_); }
  int32_t task_count() const override { return tasks_; }
  Status run_task(void* const* args, int32_t task) const override {
    char err[512] = {0};
    if (const int32_t rc = module_->kernel_run(instance_, args, task, tasks_, err, sizeof err)) {
      err[sizeof err - 1] = '\0';
      return error(abi_code(rc, Code::kernel_failed), label_, ": ",
                   err[0] ? err : "failed without a message");
    }
    return Status();
  }
  Status run_task_threads(void* const* args, int32_t task, int32_t max_threads) const override {
    if (!COLLAGE_RT_MODULE_HAS(module_, kernel_run_threads)) return run_task(args, task);
    char err[512] = {0};
    if (const int32_t rc = module_->kernel_run_threads(instance_, args, task, tasks_, max_threads,
                                                       err, sizeof err)) {
      err[sizeof err - 1] = '\0';
      return error(abi_code(rc, Code::kernel_failed), label_, " on ", max_threads,
                   " threads: ", err[0] ? err : "failed without a message");
    }
    return Status();
  }
  Status run_dynamic(const collage_rt_tensor_t* inputs, int32_t num_inputs,
                     collage_rt_alloc_fn alloc, void* alloc_ctx) const override {
    char err[512] = {0};
    if (const int32_t rc = module_->kernel_run_dynamic(instance_, inputs, num_inputs, alloc,
                                                       alloc_ctx, err, sizeof err)) {
      err[sizeof err - 1] = '\0';
      return error(abi_code(rc, Code::kernel_failed), label_, ": ",
                   err[0] ? err : "failed without a message");
    }
    return Status();
  }
  Status run_strings(const collage_rt_tensor_t* inputs, int32_t num_inputs,
                     collage_rt_alloc_fn alloc, collage_rt_bytes_fn bytes,
                     void* alloc_ctx) const override {
    char err[512] = {0};
    if (const int32_t rc = module_->kernel_run_strings(instance_, inputs, num_inputs, alloc, bytes,
                                                       alloc_ctx, err, sizeof err)) {
      err[sizeof err - 1] = '\0';
      return error(abi_code(rc, Code::kernel_failed), label_, ": ",
                   err[0] ? err : "failed without a message");
    }
    return Status();
  }
  Status prepare_threads(int32_t max_threads) override {
    if (!COLLAGE_RT_MODULE_HAS(module_, kernel_prepare_threads)) return Status();
    char err[512] = {0};
    if (const int32_t rc =
            module_->kernel_prepare_threads(instance_, max_threads, err, sizeof err)) {
      err[sizeof err - 1] = '\0';
      return error(abi_code(rc, Code::unsupported), label_, ": cannot prepare a run on ",
                   max_threads, " threads: ", err[0] ? err : "no message");
    }
    return Status();
  }

 private:
  const collage_rt_module_v1_t* module_;
  void* instance_;
  int32_t tasks_;
  std::string label_;
};

// A generated kernel: its arguments are the kernel's tensors, then its constants (pre-packed
// weights), which are appended here.
class NativeKernel : public KernelInstance {
 public:
  NativeKernel(collage_native_kernel_fn fn, int32_t tasks, size_t num_args,
               std::vector<void*> constants)
      : fn_(fn), tasks_(tasks), num_args_(num_args), constants_(std::move(constants)) {}
  int32_t task_count() const override { return tasks_; }
  Status run_task(void* const* args, int32_t task) const override {
    if (constants_.empty()) {
      fn_(args, task, tasks_);
      return Status();
    }
    // Tasks are short (a kernel has several per thread): no allocation for the usual few.
    constexpr size_t kInline = 32;
    const size_t total = num_args_ + constants_.size();
    void* inline_args[kInline];
    std::vector<void*> heap_args(total > kInline ? total : 0);
    void** all = total > kInline ? heap_args.data() : inline_args;
    std::copy(args, args + num_args_, all);
    std::copy(constants_.begin(), constants_.end(), all + num_args_);
    fn_(all, task, tasks_);
    return Status();
  }

 private:
  collage_native_kernel_fn fn_;
  int32_t tasks_;
  size_t num_args_;
  std::vector<void*> constants_;
};

}  // namespace

Status create_module_kernel(const Program& p, size_t index, const collage_rt_module_v1_t* module,
                            uint32_t create_flags, std::unique_ptr<KernelInstance>* out,
                            std::string* notice) {
  const KernelInfo& k = p.kernels[index];
  std::vector<collage_tensor_desc_t> args;
  for (uint32_t t : k.args) {
    const TensorInfo& tensor = p.tensors[t];
    args.push_back({tensor.dtype, static_cast<int32_t>(tensor.shape.size()), tensor.shape.data()});
  }
  std::vector<collage_tensor_desc_t> constant_descs;
  std::vector<const void*> constants;
  for (uint32_t c : k.constants) {
    const ConstantInfo& constant = p.constants[c];
    constant_descs.push_back(
        {constant.dtype, static_cast<int32_t>(constant.shape.size()), constant.shape.data()});
    constants.push_back(constant.data);
  }
  collage_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.entry = k.entry.c_str();
  desc.params = k.params.data();
  desc.params_size = k.params.size();
  desc.num_args = static_cast<int32_t>(args.size());
  desc.args = args.data();
  desc.num_inputs = static_cast<int32_t>(k.num_inputs);
  desc.num_constants = static_cast<int32_t>(constants.size());
  desc.constant_descs = constant_descs.data();
  desc.constants = constants.data();
  desc.flags = create_flags;
  char note[512] = {0};
  desc.notice = note;
  desc.notice_size = sizeof note;
  void* instance = nullptr;
  char err[512] = {0};
  const std::string label = kernel_label(p, index);
  // A kernel with strings runs through kernel_run_strings, data-dependent shapes or not.
  if (k.dynamic && !k.strings && !COLLAGE_RT_MODULE_HAS(module, kernel_run_dynamic))
    return error(Code::unsupported, label, ": its shapes depend on data, and module '",
                 module->name, "' cannot run such kernels (no kernel_run_dynamic)");
  if (k.strings && !COLLAGE_RT_MODULE_HAS(module, kernel_run_strings))
    return error(Code::unsupported, label, ": it reads or writes strings, and module '",
                 module->name, "' cannot run such kernels (no kernel_run_strings)");
  const int32_t rc = module->kernel_create(&desc, &instance, err, sizeof err);
  if (rc != 0 || !instance) {
    err[sizeof err - 1] = '\0';
    if (instance) module->kernel_destroy(instance);
    return error(abi_code(rc, Code::unsupported), label, ": module '", module->name,
                 "' cannot create '", k.entry, "': ", err[0] ? err : "no message");
  }
  const int32_t tasks = module->kernel_task_count(instance);
  if (tasks < 1) {
    module->kernel_destroy(instance);
    return error(Code::internal, label, ": module '", module->name, "' reports ", tasks, " tasks");
  }
  note[sizeof note - 1] = '\0';
  *notice = note;
  *out = std::make_unique<ModuleKernel>(module, instance, tasks, label);
  return Status();
}

Status create_native_kernel(const Program& p, size_t index, const SharedLibrary& code,
                            std::unique_ptr<KernelInstance>* out) {
  const KernelInfo& k = p.kernels[index];
  void* fn = code.symbol(k.entry.c_str());
  if (!fn)
    return error(Code::corrupt, kernel_label(p, index), ": the native code has no function '",
                 k.entry, "'");
  std::vector<void*> constants;
  for (uint32_t c : k.constants) constants.push_back(const_cast<uint8_t*>(p.constants[c].data));
  *out = std::make_unique<NativeKernel>(reinterpret_cast<collage_native_kernel_fn>(fn),
                                        k.task_count, k.args.size(), std::move(constants));
  return Status();
}

}  // namespace collage::rt
