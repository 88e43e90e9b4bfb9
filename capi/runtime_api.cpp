// The runtime C API (include/collage/runtime.h): a thin skin over runtime/core's LoadedModule.
#include <cstdio>
#include <cstring>

#include "blob.h"
#include "collage/runtime.h"
#include "format.h"
#include "loaded_module.h"
#include "status.h"

struct collage_module {
  std::unique_ptr<collage::rt::LoadedModule> module;
};

struct collage_outputs {
  std::vector<collage::rt::LoadedModule::Output> values;
};

namespace {

using collage::capi::guarded;
using collage::capi::make_status;
namespace rt = collage::rt;

collage_status_t* to_c(const rt::Status& s) {
  return s.ok() ? nullptr : make_status(static_cast<int32_t>(s.code()), s.message());
}

collage_status_t* invalid(const char* message) {
  return collage_status_create(COLLAGE_STATUS_INVALID_ARGUMENT, message);
}

// The fields of `options` the caller's struct has, over the defaults.
rt::LoadOptions load_options(const collage_load_options_t* options, uint32_t* flags) {
  collage_load_options_t o;
  collage_load_options_init(&o);
  if (options) std::memcpy(&o, options, std::min<size_t>(options->struct_size, sizeof o));
  rt::LoadOptions out;
  out.num_threads = o.num_threads;
  if (o.module_dir) out.module_dir = o.module_dir;
  out.no_recompile = (o.flags & COLLAGE_LOAD_NO_RECOMPILE) != 0;
  if (o.flags & COLLAGE_LOAD_EXECUTOR_SEQUENTIAL) out.executor = rt::ExecutorChoice::sequential;
  if (o.flags & COLLAGE_LOAD_EXECUTOR_WAVES)
    out.executor = out.executor == rt::ExecutorChoice::sequential ? rt::ExecutorChoice::invalid
                                                                  : rt::ExecutorChoice::waves;
  *flags = o.flags;
  return out;
}

collage_status_t* finish_load(std::unique_ptr<rt::Blob> blob, const rt::LoadOptions& options,
                              const char* what, collage_module_t** module) {
  if (options.executor == rt::ExecutorChoice::invalid)
    return invalid("load options: both COLLAGE_LOAD_EXECUTOR_SEQUENTIAL and _WAVES are set");
  std::unique_ptr<rt::LoadedModule> loaded;
  rt::Status s = rt::LoadedModule::load(std::move(blob), options, &loaded);
  if (!s.ok()) return to_c(s.prefixed(what));
  *module = new collage_module{std::move(loaded)};
  return nullptr;
}

collage_status_t* tensor_info(const collage_module_t* module, int32_t index, bool input,
                              collage_tensor_info_t* info) {
  if (!module || !info) return invalid("tensor info: NULL module or info");
  const rt::Program& p = module->module->program();
  const std::vector<uint32_t>& ids = input ? p.inputs : p.outputs;
  if (index < 0 || static_cast<size_t>(index) >= ids.size())
    return make_status(
        COLLAGE_STATUS_INVALID_ARGUMENT,
        rt::cat(input ? "input " : "output ", index, " out of range: the model has ", ids.size()));
  const rt::TensorInfo& t = p.tensors[ids[index]];
  collage_tensor_info_t full{};
  full.struct_size = info->struct_size;
  full.name = t.name.c_str();
  full.dtype = t.dtype;
  full.dl_dtype = rt::dlpack_dtype(t.dtype);
  full.ndim = static_cast<int32_t>(t.shape.size());
  full.shape = t.shape.data();
  full.bytes = t.bytes;
  full.batch_axis = -1;
  if (p.dynamic_batch.max) {
    full.batch_axis = (input ? p.dynamic_batch.input_axes : p.dynamic_batch.output_axes)[index];
    full.batch_min = p.dynamic_batch.min;
    full.batch_max = p.dynamic_batch.max;
  }
  std::memcpy(info, &full, std::min<size_t>(info->struct_size, sizeof full));
  return nullptr;
}

}  // namespace

extern "C" {

COLLAGE_API const char* collage_runtime_version(void) {
  return COLLAGE_VERSION;
}
COLLAGE_API uint32_t collage_runtime_abi_version(void) {
  return COLLAGE_RUNTIME_ABI_VERSION;
}
COLLAGE_API uint32_t collage_artifact_format_version(void) {
  return collage::artifact::kFormatVersion;
}

COLLAGE_API DLDataType collage_dtype_to_dlpack(int32_t dtype) {
  return dtype >= 0 && dtype < rt::kNumDTypes ? rt::dlpack_dtype(dtype) : DLDataType{0, 0, 0};
}

COLLAGE_API void collage_load_options_init_size(collage_load_options_t* options, size_t size) {
  if (!options || size < sizeof options->struct_size) return;
  collage_load_options_t defaults{};
  defaults.struct_size = static_cast<uint32_t>(std::min(size, sizeof defaults));
  std::memcpy(options, &defaults, defaults.struct_size);
}

COLLAGE_API void(collage_load_options_init)(collage_load_options_t* options) {
  collage_load_options_init_size(options, COLLAGE_LOAD_OPTIONS_V1_SIZE);
}

COLLAGE_API collage_status_t* collage_module_load_file(const char* path,
                                                       const collage_load_options_t* options,
                                                       collage_module_t** module) {
  return guarded("collage_module_load_file", [&]() -> collage_status_t* {
    if (!module) return invalid("collage_module_load_file: NULL module pointer");
    *module = nullptr;
    if (!path) return invalid("collage_module_load_file: NULL path");
    uint32_t flags = 0;
    const rt::LoadOptions o = load_options(options, &flags);
    std::unique_ptr<rt::Blob> blob;
    if (rt::Status s = rt::Blob::map_file(path, &blob); !s.ok()) return to_c(s);
    return finish_load(std::move(blob), o, path, module);
  });
}

COLLAGE_API collage_status_t* collage_module_load_memory(const void* data, size_t size,
                                                         const collage_load_options_t* options,
                                                         collage_module_t** module) {
  return guarded("collage_module_load_memory", [&]() -> collage_status_t* {
    if (!module) return invalid("collage_module_load_memory: NULL module pointer");
    *module = nullptr;
    if (!data && size) return invalid("collage_module_load_memory: NULL data");
    uint32_t flags = 0;
    const rt::LoadOptions o = load_options(options, &flags);
    std::unique_ptr<rt::Blob> blob;
    if (flags & COLLAGE_LOAD_BORROW_BUFFER) {
      if (reinterpret_cast<uintptr_t>(data) % collage::artifact::kAlignment != 0)
        return invalid("collage_module_load_memory: a borrowed buffer must be 64-byte aligned");
      blob = rt::Blob::borrow(data, size);
    } else if (rt::Status s = rt::Blob::copy(data, size, &blob); !s.ok()) {
      return to_c(s);
    }
    return finish_load(std::move(blob), o, "artifact in memory", module);
  });
}

COLLAGE_API void collage_module_release(collage_module_t* module) {
  delete module;
}

COLLAGE_API const char* collage_module_load_notes(const collage_module_t* module) {
  return module ? module->module->load_notes().c_str() : "";
}

COLLAGE_API int32_t collage_module_num_inputs(const collage_module_t* module) {
  return module ? static_cast<int32_t>(module->module->program().inputs.size()) : 0;
}

COLLAGE_API int32_t collage_module_num_outputs(const collage_module_t* module) {
  return module ? static_cast<int32_t>(module->module->program().outputs.size()) : 0;
}

COLLAGE_API collage_status_t* collage_module_input_info(const collage_module_t* module,
                                                        int32_t index,
                                                        collage_tensor_info_t* info) {
  return guarded("collage_module_input_info",
                 [&] { return tensor_info(module, index, /*input=*/true, info); });
}

COLLAGE_API collage_status_t* collage_module_output_info(const collage_module_t* module,
                                                         int32_t index,
                                                         collage_tensor_info_t* info) {
  return guarded("collage_module_output_info",
                 [&] { return tensor_info(module, index, /*input=*/false, info); });
}

COLLAGE_API uint64_t collage_module_arena_bytes(const collage_module_t* module) {
  return module ? module->module->program().arena_bytes : 0;
}

COLLAGE_API collage_status_t* collage_module_run(const collage_module_t* module,
                                                 const DLTensor* inputs, int32_t num_inputs,
                                                 const DLTensor* outputs, int32_t num_outputs) {
  return guarded("collage_module_run", [&]() -> collage_status_t* {
    if (!module) return invalid("collage_module_run: NULL module");
    return to_c(module->module->run(inputs, num_inputs, outputs, num_outputs));
  });
}

COLLAGE_API collage_status_t* collage_module_run_outputs(const collage_module_t* module,
                                                         const DLTensor* inputs,
                                                         int32_t num_inputs,
                                                         collage_outputs_t** outputs) {
  return guarded("collage_module_run_outputs", [&]() -> collage_status_t* {
    if (outputs) *outputs = nullptr;
    if (!module || !outputs) return invalid("collage_module_run_outputs: NULL module or outputs");
    auto result = std::make_unique<collage_outputs>();
    if (rt::Status s = module->module->run_outputs(inputs, num_inputs, &result->values); !s.ok())
      return to_c(s);
    *outputs = result.release();
    return nullptr;
  });
}

COLLAGE_API int32_t collage_outputs_count(const collage_outputs_t* outputs) {
  return outputs ? static_cast<int32_t>(outputs->values.size()) : 0;
}

COLLAGE_API collage_status_t* collage_outputs_get(const collage_outputs_t* outputs,
                                                  int32_t index, DLTensor* tensor) {
  return guarded("collage_outputs_get", [&]() -> collage_status_t* {
    if (!outputs || !tensor) return invalid("collage_outputs_get: NULL outputs or tensor");
    if (index < 0 || static_cast<size_t>(index) >= outputs->values.size())
      return make_status(COLLAGE_STATUS_INVALID_ARGUMENT,
                         rt::cat("output ", index, " out of range: there are ",
                                 outputs->values.size()));
    const auto& o = outputs->values[index];
    *tensor = DLTensor{};
    tensor->data = o.data.get();
    tensor->device = {kDLCPU, 0};
    tensor->ndim = static_cast<int32_t>(o.shape.size());
    tensor->dtype = rt::dlpack_dtype(o.dtype);
    tensor->shape = const_cast<int64_t*>(o.shape.data());
    return nullptr;
  });
}

COLLAGE_API void collage_outputs_release(collage_outputs_t* outputs) {
  delete outputs;
}

COLLAGE_API collage_status_t* collage_module_executor_stats(const collage_module_t* module,
                                                            collage_executor_stats_t* stats) {
  return guarded("collage_module_executor_stats", [&]() -> collage_status_t* {
    if (!module || !stats) return invalid("collage_module_executor_stats: NULL module or stats");
    const rt::SchedulerStats s = module->module->scheduler().stats();
    collage_executor_stats_t full{};
    full.struct_size = sizeof full;
    full.executor = s.name;
    full.runs = s.runs;
    full.wall_ns = s.wall_ns;
    full.task_ns = s.task_ns;
    full.wait_ns = s.wait_ns;
    full.overhead_ns = s.overhead_ns;
    full.fallback_runs = s.fallback_runs;
    full.wake_ns = s.wake_ns;
    const uint32_t size = std::min<uint32_t>(stats->struct_size, sizeof full);
    std::memcpy(stats, &full, size);
    stats->struct_size = size;
    return nullptr;
  });
}

COLLAGE_API collage_status_t* collage_module_set_profiling(collage_module_t* module,
                                                           int32_t enabled) {
  return guarded("collage_module_set_profiling", [&]() -> collage_status_t* {
    if (!module) return invalid("collage_module_set_profiling: NULL module");
    module->module->set_profiling(enabled != 0);
    return nullptr;
  });
}

COLLAGE_API collage_status_t* collage_module_write_profile(const collage_module_t* module,
                                                           const char* path) {
  return guarded("collage_module_write_profile", [&]() -> collage_status_t* {
    if (!module || !path) return invalid("collage_module_write_profile: NULL module or path");
    const std::string json = module->module->profile_json();
    std::FILE* f = std::fopen(path, "wb");
    if (!f)
      return make_status(COLLAGE_STATUS_IO,
                         rt::cat("cannot write profile '", path, "': ", std::strerror(errno)));
    const bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
    if (std::fclose(f) != 0 || !ok)
      return make_status(COLLAGE_STATUS_IO, rt::cat("writing profile '", path, "' failed"));
    return nullptr;
  });
}

}  // extern "C"
