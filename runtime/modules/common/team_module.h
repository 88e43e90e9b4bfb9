// The C entry points of a runtime module whose kernels run as one task on a thread team of their
// own (oneDNN on OpenMP, OpenVINO on oneTBB), with variants for fewer threads: the argument
// checks, the one-task rule, and the conversion of every C++ exception into an error code and
// message. Header-only, so that each module's shared library stays self-contained.
//
// A module supplies Traits:
//   using Kernel = ...;  // void run(void* const* args), run_threads(args, int32_t max_threads),
//                        // prepare_threads(int32_t max_threads); each may throw
//   static Kernel* create(const collage_kernel_desc_t& desc);    // throws naming what is wrong
//   static std::string message(const std::exception& e);         // the error text for `e`
//   static constexpr const char* kKernels = "...";               // "<module> kernels", in messages
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "collage/runtime.h" /* collage_status_code_t */
#include "collage/runtime_module.h"

namespace collage::rt_common {

template <class Traits>
struct TeamModule {
  using Kernel = typename Traits::Kernel;

  static void write_error(char* err, size_t err_size, const std::string& message) {
    if (err == nullptr || err_size == 0) return;
    std::snprintf(err, err_size, "%s", message.c_str());
  }

  // Runs fn, turning any exception into a message (Traits::message) and `failure`, a
  // collage_status_code_t; returns 0 on success.
  template <typename F>
  static int32_t guarded(char* err, size_t err_size, int32_t failure, F&& fn) {
    try {
      fn();
      return COLLAGE_STATUS_OK;
    } catch (const std::bad_alloc&) {
      write_error(err, err_size, "out of memory");
    } catch (const std::exception& e) {
      write_error(err, err_size, Traits::message(e));
    } catch (...) {
      write_error(err, err_size, "unknown error");
    }
    return failure;
  }

  static int32_t create(const collage_kernel_desc_t* desc, void** kernel, char* err,
                        size_t err_size) {
    if (kernel) *kernel = nullptr;
    if (!desc || !kernel) {
      write_error(err, err_size, "null descriptor or result pointer");
      return COLLAGE_STATUS_INVALID_ARGUMENT;
    }
    return guarded(err, err_size, COLLAGE_STATUS_UNSUPPORTED,
                   [&] { *kernel = Traits::create(*desc); });
  }

  static int32_t task_count(void*) { return 1; }

  // What is wrong with a run's arguments; empty when nothing is.
  static std::string check_run(void* kernel, void* const* args, int32_t task_id,
                               int32_t task_count) {
    if (!kernel || !args) return "null kernel or arguments";
    if (task_id != 0 || task_count != 1)
      return "task " + std::to_string(task_id) + " of " + std::to_string(task_count) + ": " +
             Traits::kKernels + " run as one task";
    return "";
  }

  static int32_t run(void* kernel, void* const* args, int32_t task_id, int32_t task_count,
                     char* err, size_t err_size) {
    if (std::string e = check_run(kernel, args, task_id, task_count); !e.empty()) {
      write_error(err, err_size, e);
      return COLLAGE_STATUS_INVALID_ARGUMENT;
    }
    return guarded(err, err_size, COLLAGE_STATUS_KERNEL_FAILED,
                   [&] { static_cast<Kernel*>(kernel)->run(args); });
  }

  static void destroy(void* kernel) { delete static_cast<Kernel*>(kernel); }

  static int32_t run_threads(void* kernel, void* const* args, int32_t task_id,
                             int32_t task_count, int32_t max_threads, char* err,
                             size_t err_size) {
    if (std::string e = check_run(kernel, args, task_id, task_count); !e.empty()) {
      write_error(err, err_size, e);
      return COLLAGE_STATUS_INVALID_ARGUMENT;
    }
    return guarded(err, err_size, COLLAGE_STATUS_KERNEL_FAILED,
                   [&] { static_cast<Kernel*>(kernel)->run_threads(args, max_threads); });
  }

  static int32_t prepare_threads(void* kernel, int32_t max_threads, char* err, size_t err_size) {
    if (!kernel) {
      write_error(err, err_size, "null kernel");
      return COLLAGE_STATUS_INVALID_ARGUMENT;
    }
    return guarded(err, err_size, COLLAGE_STATUS_UNSUPPORTED,
                   [&] { static_cast<Kernel*>(kernel)->prepare_threads(max_threads); });
  }

  static constexpr collage_rt_module_v1_t table(const char* name, const char* version) {
    return {sizeof(collage_rt_module_v1_t),
            COLLAGE_RT_MODULE_ABI_VERSION,
            name,
            version,
            create,
            task_count,
            run,
            destroy,
            run_threads,
            prepare_threads,
            /*kernel_run_dynamic=*/nullptr,
            /*kernel_run_strings=*/nullptr};
  }
};

}  // namespace collage::rt_common
