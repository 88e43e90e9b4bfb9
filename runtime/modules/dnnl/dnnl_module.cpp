// The dnnl runtime module's C function table: every entry point catches every exception and
// reports it through the caller's error buffer.
#include "dnnl_module.h"

#include <cstdio>
#include <cstring>
#include <memory>

#include "collage/runtime.h"
#include "dnnl_kernel.h"
#include "dnnl_threaded.h"

namespace collage::rt_dnnl {
namespace {

#define COLLAGE_RT_DNNL_STR2(x) #x
#define COLLAGE_RT_DNNL_STR(x) COLLAGE_RT_DNNL_STR2(x)
constexpr const char* kVersion =
    "dnnl-" COLLAGE_RT_DNNL_STR(DNNL_VERSION_MAJOR) "." COLLAGE_RT_DNNL_STR(
        DNNL_VERSION_MINOR) "." COLLAGE_RT_DNNL_STR(DNNL_VERSION_PATCH) "/1";

void write_error(char* err, size_t err_size, const std::string& message) {
  if (!err || err_size == 0) return;
  std::snprintf(err, err_size, "%s", message.c_str());
}

// Runs fn, turning any exception into a message and `failure` (the ABI's error convention,
// runtime_module.h): a collage_status_code_t; returns 0 on success.
template <typename F>
int32_t guarded(char* err, size_t err_size, int32_t failure, F&& fn) {
  try {
    fn();
    return 0;
  } catch (const dnnl::error& e) {
    write_error(err, err_size, std::string("oneDNN: ") + e.what());
  } catch (const ParamError& e) {
    write_error(err, err_size, e.what());
  } catch (const std::bad_alloc&) {
    write_error(err, err_size, "out of memory");
  } catch (const std::exception& e) {
    write_error(err, err_size, e.what());
  } catch (...) {
    write_error(err, err_size, "unknown error");
  }
  return failure;
}

int32_t kernel_create(const collage_kernel_desc_t* desc, void** kernel, char* err,
                      size_t err_size) {
  if (kernel) *kernel = nullptr;
  return guarded(err, err_size, COLLAGE_STATUS_UNSUPPORTED, [&] {
    if (!desc || !kernel) throw ParamError("null descriptor or result pointer");
    *kernel = new ThreadedKernel(*desc);
  });
}

int32_t kernel_task_count(void*) {
  return 1;
}

void check_run(void* kernel, void* const* args, int32_t task_id, int32_t task_count) {
  if (!kernel || !args) throw ParamError("null kernel or arguments");
  if (task_id != 0 || task_count != 1)
    throw ParamError("task " + std::to_string(task_id) + " of " + std::to_string(task_count) +
                     ": dnnl kernels run as one task");
}

int32_t kernel_run(void* kernel, void* const* args, int32_t task_id, int32_t task_count, char* err,
                   size_t err_size) {
  return guarded(err, err_size, COLLAGE_STATUS_KERNEL_FAILED, [&] {
    check_run(kernel, args, task_id, task_count);
    static_cast<ThreadedKernel*>(kernel)->run(args);
  });
}

void kernel_destroy(void* kernel) {
  delete static_cast<ThreadedKernel*>(kernel);
}

int32_t kernel_run_threads(void* kernel, void* const* args, int32_t task_id, int32_t task_count,
                           int32_t max_threads, char* err, size_t err_size) {
  return guarded(err, err_size, COLLAGE_STATUS_KERNEL_FAILED, [&] {
    check_run(kernel, args, task_id, task_count);
    static_cast<ThreadedKernel*>(kernel)->run_threads(args, max_threads);
  });
}

int32_t kernel_prepare_threads(void* kernel, int32_t max_threads, char* err, size_t err_size) {
  return guarded(err, err_size, COLLAGE_STATUS_UNSUPPORTED, [&] {
    if (!kernel) throw ParamError("null kernel");
    static_cast<ThreadedKernel*>(kernel)->prepare_threads(max_threads);
  });
}

constexpr collage_rt_module_v1_t kModule = {
    sizeof(collage_rt_module_v1_t),
    COLLAGE_RT_MODULE_ABI_VERSION,
    "dnnl",
    kVersion,
    kernel_create,
    kernel_task_count,
    kernel_run,
    kernel_destroy,
    kernel_run_threads,
    kernel_prepare_threads,
};

}  // namespace

const collage_rt_module_v1_t* module_table() {
  return &kModule;
}

ProbeResult probe_kernel(const collage_kernel_desc_t& desc) {
  ProbeResult result;
  char err[1024] = {0};
  std::unique_ptr<DnnlKernel> kernel;
  if (guarded(err, sizeof err, COLLAGE_STATUS_UNSUPPORTED,
              [&] { kernel = std::make_unique<DnnlKernel>(desc); }) != 0) {
    result.error = err;
    return result;
  }
  for (const RepackedConstant& c : kernel->repacked()) {
    const auto* p = static_cast<const uint8_t*>(c.data);
    result.packed.push_back({c.index, c.layout, std::vector<uint8_t>(p, p + c.bytes)});
  }
  result.implementations = kernel->implementations();
  return result;
}

}  // namespace collage::rt_dnnl
