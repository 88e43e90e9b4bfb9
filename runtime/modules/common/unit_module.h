// The C entry points of a runtime module whose kernels split their work into independent units
// (rows, channels, ...): descriptor checks, task counts, the even spread of units over tasks, and
// the conversion of every C++ exception into an error code and message. A module supplies its
// kernel type (with `int64_t units() const` and `void run(void* const* args, int64_t begin, int64_t
// end) const`) and a factory; header-only, so that each module's shared library stays
// self-contained.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "collage/runtime.h" /* collage_status_code_t: the error convention */
#include "collage/runtime_module.h"

namespace collage::rt_common {

inline void write_error(char* err, size_t err_size, const std::string& message) {
  if (err == nullptr || err_size == 0) return;
  std::snprintf(err, err_size, "%s", message.c_str());
}

// What is wrong with a kernel descriptor in a way no module accepts; empty when nothing is.
inline std::string check_desc(const collage_kernel_desc_t* desc) {
  if (desc == nullptr) return "null kernel descriptor";
  if (desc->struct_size < COLLAGE_KERNEL_DESC_V1_BASE_SIZE)
    return "kernel descriptor of " + std::to_string(desc->struct_size) + " bytes is too small";
  if (desc->entry == nullptr) return "kernel descriptor has no entry";
  if (desc->params == nullptr && desc->params_size > 0) return "kernel parameters are missing";
  return "";
}

// `Create` builds a kernel from a descriptor check_desc() accepted, returning an error message
// (empty on success); kernels report min(units, MaxTasks) tasks.
template <class Kernel, std::string (*Create)(const collage_kernel_desc_t&, Kernel*&),
          int64_t MaxTasks>
struct UnitModule {
  static int32_t create(const collage_kernel_desc_t* desc, void** kernel, char* err,
                        size_t err_size) {
    if (kernel == nullptr) {
      write_error(err, err_size, "null kernel output pointer");
      return COLLAGE_STATUS_INVALID_ARGUMENT;
    }
    *kernel = nullptr;
    try {
      std::string e = check_desc(desc);
      Kernel* k = nullptr;
      if (e.empty()) e = Create(*desc, k);
      if (!e.empty()) {
        write_error(err, err_size, e);
        return COLLAGE_STATUS_UNSUPPORTED;
      }
      *kernel = k;
      return 0;
    } catch (const std::exception& e) {
      write_error(err, err_size, std::string("kernel creation failed: ") + e.what());
    } catch (...) {
      write_error(err, err_size, "kernel creation failed");
    }
    return COLLAGE_STATUS_INTERNAL;
  }

  static int32_t task_count(void* kernel) {
    if (kernel == nullptr) return 1;
    const int64_t units = static_cast<const Kernel*>(kernel)->units();
    return static_cast<int32_t>(std::clamp<int64_t>(units, 1, MaxTasks));
  }

  static int32_t run(void* kernel, void* const* args, int32_t task_id, int32_t task_count,
                     char* err, size_t err_size) {
    if (kernel == nullptr || args == nullptr) {
      write_error(err, err_size, "null kernel or argument list");
      return COLLAGE_STATUS_INVALID_ARGUMENT;
    }
    if (task_count < 1 || task_id < 0 || task_id >= task_count) {
      write_error(err, err_size,
                  "task " + std::to_string(task_id) + " of " + std::to_string(task_count) +
                      " is out of range");
      return COLLAGE_STATUS_INVALID_ARGUMENT;
    }
    try {
      const auto* k = static_cast<const Kernel*>(kernel);
      // Units are spread evenly over however many tasks the caller runs (the first
      // units % task_count tasks take one more).
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
    return COLLAGE_STATUS_KERNEL_FAILED;
  }

  static void destroy(void* kernel) { delete static_cast<Kernel*>(kernel); }

  static constexpr collage_rt_module_v1_t table(const char* name, const char* version) {
    return {sizeof(collage_rt_module_v1_t),
            COLLAGE_RT_MODULE_ABI_VERSION,
            name,
            version,
            create,
            task_count,
            run,
            destroy,
            /*kernel_run_threads=*/nullptr,
            /*kernel_prepare_threads=*/nullptr,
            /*kernel_run_dynamic=*/nullptr,
            /*kernel_run_strings=*/nullptr};
  }
};

}  // namespace collage::rt_common
