// LoadedModule: loading (decode, modules, native code, kernels) and running on DLPack tensors.
#include "loaded_module.h"

#include <cstdlib>
#include <cstring>
#include <thread>

#include "wave_executor.h"

namespace collage::rt {
namespace {

constexpr std::string_view kNativeModule = "native";
constexpr uint8_t kDLBoolCode = 6;  // kDLBool in DLPack >= 0.8

// The DLPack type of each collage dtype, in collage_dtype_t order.
constexpr DLDataType kDLTypes[kNumDTypes] = {
    {kDLFloat, 32, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLInt, 8, 1},
    {kDLInt, 32, 1},   {kDLInt, 64, 1},   {kDLUInt, 8, 1}};

bool dtype_matches(int32_t dtype, DLDataType t) {
  const DLDataType want = kDLTypes[dtype];
  if (t.code == want.code && t.bits == want.bits && t.lanes == want.lanes) return true;
  // bool: kDLUInt/8 (DLPack 0.6) or kDLBool/8 (newer)
  return dtype == 6 && t.code == kDLBoolCode && t.bits == 8 && t.lanes == 1;
}

std::string dl_type_string(const DLTensor& t) {
  std::string s;
  for (int32_t d = 0; d < kNumDTypes && s.empty(); ++d)
    if (dtype_matches(d, t.dtype)) s = dtype_name(d);
  if (s.empty())
    s = cat("dlpack(code ", static_cast<int>(t.dtype.code), ", bits ",
            static_cast<int>(t.dtype.bits), ", lanes ", static_cast<int>(t.dtype.lanes), ")");
  s += '[';
  if (t.ndim == 0) s += "scalar";
  for (int32_t i = 0; i < t.ndim && t.shape; ++i) s += cat(i ? "x" : "", t.shape[i]);
  return s + ']';
}

// The data pointer of `t` after checking it against `info`.
Status check_tensor(const char* role, size_t i, const TensorInfo& info, const DLTensor& t,
                    void** data) {
  const std::string what = cat(role, " ", i, " '", info.name, "'");
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
    return error(Code::invalid_argument, what, ": device type ",
                 static_cast<int>(t.device.device_type), ", only CPU memory is supported");
  bool same = dtype_matches(info.dtype, t.dtype) &&
              t.ndim == static_cast<int32_t>(info.shape.size()) && (t.ndim == 0 || t.shape);
  for (int32_t d = 0; same && d < t.ndim; ++d) same = t.shape[d] == info.shape[d];
  if (!same)
    return error(
        Code::invalid_argument, what, ": expected ", type_string(info.dtype, info.shape), ", got ",
        t.ndim < 0 || (t.ndim > 0 && !t.shape) ? "a tensor without a shape" : dl_type_string(t));
  if (t.strides) {
    int64_t expected = 1;
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      if (t.shape[d] != 1 && t.strides[d] != expected)
        return error(Code::invalid_argument, what,
                     ": not dense row-major (strides must be null or compact)");
      expected *= t.shape[d];
    }
  }
  if (!t.data && info.bytes != 0) return error(Code::invalid_argument, what, ": no data pointer");
  *data = static_cast<uint8_t*>(t.data) + t.byte_offset;
  return Status();
}

}  // namespace

DLDataType dlpack_dtype(int32_t dtype) {
  return kDLTypes[dtype];
}

Status LoadedModule::load(std::unique_ptr<Blob> blob, const LoadOptions& options,
                          std::unique_ptr<LoadedModule>* out) {
  std::unique_ptr<LoadedModule> m(new LoadedModule());
  m->blob_ = std::move(blob);
  COLLAGE_RT_RETURN_IF_ERROR(decode_artifact(m->blob_->bytes(), &m->program_));
  COLLAGE_RT_RETURN_IF_ERROR(m->build(options));
  *out = std::move(m);
  return Status();
}

Status LoadedModule::build(const LoadOptions& options) {
  const Program& p = program_;
  modules_.resize(p.modules.size());
  for (size_t i = 0; i < p.modules.size(); ++i) {
    if (p.modules[i] != kNativeModule) {
      COLLAGE_RT_RETURN_IF_ERROR(
          open_runtime_module(p.modules[i], options.module_dir, &modules_[i]));
      continue;
    }
    if (p.native_code.empty())
      return error(Code::corrupt, "corrupt artifact: native kernels but no native-code section");
    COLLAGE_RT_RETURN_IF_ERROR(load_native_code(p.native_code, &native_));
  }
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    std::unique_ptr<KernelInstance> kernel;
    const RuntimeModule& module = modules_[p.kernels[k].module];
    if (module.table) {
      std::string notice;
      COLLAGE_RT_RETURN_IF_ERROR(create_module_kernel(
          p, k, module.table, options.no_recompile ? COLLAGE_KERNEL_CREATE_NO_RECOMPILE : 0,
          &kernel, &notice));
      if (!notice.empty())
        load_notes_ += cat(load_notes_.empty() ? "" : "\n", "kernel ", k, " (",
                           p.kernels[k].backend, "): ", notice);
    } else
      COLLAGE_RT_RETURN_IF_ERROR(create_native_kernel(p, k, *native_, &kernel));
    kernels_.push_back(std::move(kernel));
  }

  int threads = options.num_threads;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_ = std::make_unique<TaskPool>(threads);
  scheduler_ = make_sequential_scheduler(pool_.get());
  if (options.executor == ExecutorChoice::waves && !p.has_schedule)
    return error(Code::unsupported,
                 "the wave executor was asked for, but the artifact has no wave schedule (it was "
                 "compiled without one); it runs with the sequential executor only");
  const bool waves = options.executor == ExecutorChoice::waves ||
                     (options.executor == ExecutorChoice::automatic && p.has_schedule &&
                      p.schedule.preferred == waves::Executor::waves);
  if (waves) {
    // Kernels the schedule pins to fewer threads of their own get those variants built now
    // (oneDNN creates primitives per thread count), not in the first run.
    for (size_t k = 0; k < p.schedule.threads.size(); ++k)
      if (p.schedule.threads[k])
        COLLAGE_RT_RETURN_IF_ERROR(
            kernels_[k]->prepare_threads(static_cast<int32_t>(p.schedule.threads[k])));
    scheduler_ = make_wave_scheduler(&program_.schedule, std::move(scheduler_));
  }
  for (const ConstantInfo& c : p.constants) plan_.constants.push_back(c.data);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    Step& step = plan_.steps.emplace_back();
    step.kernel = kernels_[k].get();
    step.kernel_index = static_cast<uint32_t>(k);
    for (uint32_t t : p.kernels[k].args)
      step.args.push_back({p.tensors[t].storage, p.tensors[t].location});
  }
  return Status();
}

LoadedModule::~LoadedModule() {
  for (uint8_t* a : free_arenas_) std::free(a);
}

uint8_t* LoadedModule::acquire_arena() const {
  {
    std::lock_guard<std::mutex> lock(arena_mu_);
    if (!free_arenas_.empty()) {
      uint8_t* a = free_arenas_.back();
      free_arenas_.pop_back();
      return a;
    }
  }
  // aligned_alloc wants a multiple of the alignment; the plan's size need not be one.
  return static_cast<uint8_t*>(std::aligned_alloc(64, (program_.arena_bytes + 127) / 64 * 64));
}

void LoadedModule::release_arena(uint8_t* arena) const {
  std::lock_guard<std::mutex> lock(arena_mu_);
  free_arenas_.push_back(arena);
}

Status LoadedModule::run(const DLTensor* inputs, int32_t num_inputs, const DLTensor* outputs,
                         int32_t num_outputs) const {
  const Program& p = program_;
  if (num_inputs != static_cast<int32_t>(p.inputs.size()) ||
      num_outputs != static_cast<int32_t>(p.outputs.size()))
    return error(Code::invalid_argument, "run: the model takes ", p.inputs.size(), " inputs and ",
                 p.outputs.size(), " outputs, got ", num_inputs, " and ", num_outputs);
  if ((num_inputs && !inputs) || (num_outputs && !outputs))
    return error(Code::invalid_argument, "run: null tensor array");
  std::vector<void*> in(p.inputs.size()), out(p.outputs.size());
  for (size_t i = 0; i < in.size(); ++i)
    COLLAGE_RT_RETURN_IF_ERROR(check_tensor("input", i, p.tensors[p.inputs[i]], inputs[i], &in[i]));
  for (size_t i = 0; i < out.size(); ++i)
    COLLAGE_RT_RETURN_IF_ERROR(
        check_tensor("output", i, p.tensors[p.outputs[i]], outputs[i], &out[i]));

  const bool profiling = profiler_.enabled();
  std::vector<StepTiming> timings;
  const auto start =
      profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  uint8_t* arena = acquire_arena();
  if (!arena)
    return error(Code::internal, "run: out of memory for a ", p.arena_bytes, "-byte arena");
  Frame frame{arena, in.data(), out.data(), profiling ? &timings : nullptr};
  Status s = scheduler_->run(plan_, frame);
  release_arena(arena);
  COLLAGE_RT_RETURN_IF_ERROR(s);

  // Outputs that no kernel wrote in place: graph inputs, constants, repeated outputs.
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const TensorInfo& t = p.tensors[p.outputs[i]];
    const void* src = nullptr;
    switch (t.storage) {
      case Storage::output:
        if (t.location != i) src = out[t.location];
        break;
      case Storage::input:
        src = in[t.location];
        break;
      case Storage::constant:
        src = p.constants[t.location].data;
        break;
      case Storage::arena:
        break;
    }
    if (src && t.bytes) std::memmove(out[i], src, t.bytes);
  }
  if (profiling) profiler_.add_run(plan_, timings, start, std::chrono::steady_clock::now());
  return Status();
}

}  // namespace collage::rt
