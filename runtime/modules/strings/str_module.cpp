// The strings module's C entry points: no C++ exception leaves them.
#include "str_module.h"

#include <exception>
#include <string>

#include "../common/unit_module.h"
#include "str_kernel.h"

namespace collage::rt_strings {
namespace {

using rt_common::write_error;

int32_t create(const collage_kernel_desc_t* desc, void** kernel, char* err, size_t err_size) {
  if (!kernel) {
    write_error(err, err_size, "null kernel output pointer");
    return COLLAGE_STATUS_INVALID_ARGUMENT;
  }
  *kernel = nullptr;
  try {
    std::string e = rt_common::check_desc(desc);
    StrKernel* k = nullptr;
    if (e.empty()) e = StrKernel::create(*desc, k);
    if (!e.empty()) {
      write_error(err, err_size, e);
      return COLLAGE_STATUS_UNSUPPORTED;
    }
    *kernel = k;
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_size, std::string("kernel creation failed: ") + e.what());
  }
  return COLLAGE_STATUS_INTERNAL;
}

int32_t task_count(void*) { return 1; }

// A kernel without string values (a LabelEncoder between numbers) runs as a static one; those
// with strings, whose bytes the runtime must give, only through kernel_run_strings.
int32_t run(void* kernel, void* const* args, int32_t, int32_t, char* err, size_t err_size) {
  if (!kernel || !args) {
    write_error(err, err_size, "null kernel or arguments");
    return COLLAGE_STATUS_INVALID_ARGUMENT;
  }
  try {
    const std::string e = static_cast<const StrKernel*>(kernel)->run_static(args);
    if (e.empty()) return 0;
    write_error(err, err_size, e);
  } catch (const std::exception& e) {
    write_error(err, err_size, std::string("kernel run failed: ") + e.what());
  }
  return COLLAGE_STATUS_KERNEL_FAILED;
}

int32_t run_strings(void* kernel, const collage_rt_tensor_t* inputs, int32_t num_inputs,
                    collage_rt_alloc_fn alloc, collage_rt_bytes_fn bytes, void* alloc_ctx,
                    char* err, size_t err_size) {
  if (!kernel || !alloc || !bytes) {
    write_error(err, err_size, "null kernel or allocator");
    return COLLAGE_STATUS_INVALID_ARGUMENT;
  }
  try {
    const std::string e = static_cast<const StrKernel*>(kernel)->run(
        inputs, num_inputs, StrOutputs{alloc, bytes, alloc_ctx});
    if (e.empty()) return 0;
    write_error(err, err_size, e);
  } catch (const std::exception& e) {
    write_error(err, err_size, std::string("kernel run failed: ") + e.what());
  }
  return COLLAGE_STATUS_KERNEL_FAILED;
}

void destroy(void* kernel) { delete static_cast<StrKernel*>(kernel); }

}  // namespace

const collage_rt_module_v1_t* module_table() {
  static constexpr collage_rt_module_v1_t kModule = {
      sizeof(collage_rt_module_v1_t), COLLAGE_RT_MODULE_ABI_VERSION, kModuleName, kModuleVersion,
      create, task_count, run, destroy, /*kernel_run_threads=*/nullptr,
      /*kernel_prepare_threads=*/nullptr, /*kernel_run_dynamic=*/nullptr, run_strings};
  return &kModule;
}

}  // namespace collage::rt_strings
