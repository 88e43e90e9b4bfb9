// The trees runtime module: the C entry points that create, run and destroy TreeEnsemble kernels.
// No C++ exception leaves this file; every failure becomes an error message.
#include "trees_module.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "trees_kernel.h"

namespace collage::rt_trees {
namespace {

// Tasks reported to the runtime; kernels with more units run several units per task.
constexpr int64_t kMaxTasks = 256;

void write_error(char* err, size_t err_size, const std::string& message) {
  if (err == nullptr || err_size == 0) return;
  std::snprintf(err, err_size, "%s", message.c_str());
}

std::string create_kernel(const collage_kernel_desc_t* desc, EnsembleKernel*& kernel) {
  if (desc == nullptr) return "null kernel descriptor";
  if (desc->struct_size < sizeof(collage_kernel_desc_t))
    return "kernel descriptor of " + std::to_string(desc->struct_size) + " bytes is too small";
  if (desc->entry == nullptr) return "kernel descriptor has no entry";
  if (desc->params == nullptr && desc->params_size > 0) return "kernel parameters are missing";
  if (std::strcmp(desc->entry, kEntryEnsemble) != 0)
    return std::string("unknown kernel entry '") + desc->entry + "'";
  return EnsembleKernel::create(*desc, kernel);
}

int32_t kernel_create(const collage_kernel_desc_t* desc, void** kernel, char* err,
                      size_t err_size) {
  if (kernel == nullptr) {
    write_error(err, err_size, "null kernel output pointer");
    return 1;
  }
  *kernel = nullptr;
  try {
    EnsembleKernel* k = nullptr;
    if (std::string e = create_kernel(desc, k); !e.empty()) {
      write_error(err, err_size, e);
      return 1;
    }
    *kernel = k;
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_size, std::string("kernel creation failed: ") + e.what());
  } catch (...) {
    write_error(err, err_size, "kernel creation failed");
  }
  return 1;
}

int32_t kernel_task_count(void* kernel) {
  if (kernel == nullptr) return 1;
  const int64_t units = static_cast<const EnsembleKernel*>(kernel)->units();
  return static_cast<int32_t>(std::clamp<int64_t>(units, 1, kMaxTasks));
}

int32_t kernel_run(void* kernel, void* const* args, int32_t task_id, int32_t task_count, char* err,
                   size_t err_size) {
  if (kernel == nullptr || args == nullptr) {
    write_error(err, err_size, "null kernel or argument list");
    return 1;
  }
  if (task_count < 1 || task_id < 0 || task_id >= task_count) {
    write_error(err, err_size,
                "task " + std::to_string(task_id) + " of " + std::to_string(task_count) +
                    " is out of range");
    return 1;
  }
  try {
    const auto* k = static_cast<const EnsembleKernel*>(kernel);
    // Units are spread evenly over the tasks (the first units % task_count take one more).
    const int64_t units = k->units();
    const int64_t share = units / task_count, extra = units % task_count;
    const int64_t begin = share * task_id + std::min<int64_t>(task_id, extra);
    const int64_t end = begin + share + (task_id < extra ? 1 : 0);
    if (begin < end) k->run(args, begin, end);
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_size, std::string("kernel run failed: ") + e.what());
  } catch (...) {
    write_error(err, err_size, "kernel run failed");
  }
  return 1;
}

void kernel_destroy(void* kernel) {
  delete static_cast<EnsembleKernel*>(kernel);
}

constexpr collage_rt_module_v1_t kModule = {
    sizeof(collage_rt_module_v1_t),
    COLLAGE_RT_MODULE_ABI_VERSION,
    kModuleName,
    kModuleVersion,
    kernel_create,
    kernel_task_count,
    kernel_run,
    kernel_destroy,
};

}  // namespace

const collage_rt_module_v1_t* module_table() {
  return &kModule;
}

}  // namespace collage::rt_trees
