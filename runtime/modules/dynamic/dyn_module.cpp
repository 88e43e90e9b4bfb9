// The dynamic module's C entry points: no C++ exception leaves them.
#include "dyn_module.h"

#include <exception>
#include <string>

#include "../common/unit_module.h"
#include "dyn_kernel.h"

namespace collage::rt_dynamic {
namespace {

using rt_common::write_error;

int32_t create(const collage_kernel_desc_t* desc, void** kernel, char* err, size_t err_size) {
  if (!kernel) {
    write_error(err, err_size, "null kernel output pointer");
    return 1;
  }
  *kernel = nullptr;
  try {
    std::string e = rt_common::check_desc(desc);
    DynKernel* k = nullptr;
    if (e.empty()) e = DynKernel::create(*desc, k);
    if (!e.empty()) {
      write_error(err, err_size, e);
      return 1;
    }
    *kernel = k;
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_size, std::string("kernel creation failed: ") + e.what());
  }
  return 1;
}

int32_t task_count(void* kernel) {
  return kernel ? static_cast<const DynKernel*>(kernel)->task_count() : 1;
}

// Kernels with data-dependent shapes run only through run_dynamic; one whose shapes are all known
// (it reads an attribute at run time, SVMPairwiseCoupling, or a scan or scatter in a static plan)
// runs here on the planned buffers, a scan split into tasks.
int32_t run(void* kernel, void* const* args, int32_t task_id, int32_t tasks, char* err,
            size_t err_size) {
  if (!kernel) {
    write_error(err, err_size, "null kernel");
    return 1;
  }
  try {
    const std::string e =
        static_cast<const DynKernel*>(kernel)->run_static_task(args, task_id, tasks);
    if (e.empty()) return 0;
    write_error(err, err_size, e);
  } catch (const std::exception& e) {
    write_error(err, err_size, std::string("kernel run failed: ") + e.what());
  }
  return 1;
}

int32_t run_dynamic(void* kernel, const collage_rt_tensor_t* inputs, int32_t num_inputs,
                    collage_rt_alloc_fn alloc, void* alloc_ctx, char* err, size_t err_size) {
  if (!kernel) {
    write_error(err, err_size, "null kernel");
    return 1;
  }
  try {
    const std::string e =
        static_cast<const DynKernel*>(kernel)->run(inputs, num_inputs, alloc, alloc_ctx);
    if (e.empty()) return 0;
    write_error(err, err_size, e);
  } catch (const std::exception& e) {
    write_error(err, err_size, std::string("kernel run failed: ") + e.what());
  }
  return 1;
}

void destroy(void* kernel) { delete static_cast<DynKernel*>(kernel); }

}  // namespace

const collage_rt_module_v1_t* module_table() {
  static constexpr collage_rt_module_v1_t kModule = {
      sizeof(collage_rt_module_v1_t), COLLAGE_RT_MODULE_ABI_VERSION, kModuleName, kModuleVersion,
      create, task_count, run, destroy, /*kernel_run_threads=*/nullptr,
      /*kernel_prepare_threads=*/nullptr, run_dynamic, /*kernel_run_strings=*/nullptr};
  return &kModule;
}

}  // namespace collage::rt_dynamic
