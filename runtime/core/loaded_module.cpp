// LoadedModule: loading (decode, modules, native code, kernels) and running on DLPack tensors.
#include "loaded_module.h"

#include <cstdlib>
#include <cstring>
#include <thread>

#include "kernel_workspace.h"
#include "tensor_check.h"
#include "wave_executor.h"

namespace collage::rt {
namespace {

constexpr std::string_view kNativeModule = "native";
}  // namespace

Status LoadedModule::load(std::unique_ptr<Blob> blob, const LoadOptions& options,
                          std::unique_ptr<LoadedModule>* out) {
  std::unique_ptr<LoadedModule> m(new LoadedModule());
  m->blob_ = std::move(blob);
  COLLAGE_RT_RETURN_IF_ERROR(decode_artifact(m->blob_->bytes(), &m->program_));
  COLLAGE_RT_RETURN_IF_ERROR(m->build(options));
  *out = std::move(m);
  return Status();
}

LoadedModule::~LoadedModule() = default;

Status LoadedModule::build(const LoadOptions& options) {
  int threads = options.num_threads;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_ = std::make_unique<TaskPool>(threads);
  if (options.executor == ExecutorChoice::waves && !program_.has_schedule)
    return error(Code::unsupported,
                 "the wave executor was asked for, but the artifact has no wave schedule (it was "
                 "compiled without one); it runs with the sequential executor only");
  for (const Program& v : program_.variants) {
    runs_.push_back(std::make_unique<PlanRun>());
    COLLAGE_RT_RETURN_IF_ERROR(build_run(v, options, runs_.back().get()));
  }
  runs_.push_back(std::make_unique<PlanRun>());
  return build_run(program_, options, runs_.back().get());
}

Status LoadedModule::build_run(const Program& p, const LoadOptions& options, PlanRun* r) {
  r->program = &p;
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const std::string& name = p.modules[p.kernels[k].module];
    auto it = modules_.find(name);
    if (it == modules_.end()) {
      RuntimeModule& module = modules_[name];
      if (name != kNativeModule) {
        COLLAGE_RT_RETURN_IF_ERROR(open_runtime_module(name, options.module_dir, &module));
      } else {
        if (p.native_code.empty())
          return error(Code::corrupt,
                       "corrupt artifact: native kernels but no native-code section");
        COLLAGE_RT_RETURN_IF_ERROR(load_native_code(p.native_code, &native_));
        install_workspace_hooks(native_->symbol(kWorkspaceAllocHook),
                                native_->symbol(kWorkspaceFreeHook));
      }
      it = modules_.find(name);
    }
    std::unique_ptr<KernelInstance> kernel;
    if (it->second.table) {
      std::string notice;
      COLLAGE_RT_RETURN_IF_ERROR(create_module_kernel(
          p, k, it->second.table, options.no_recompile ? COLLAGE_KERNEL_CREATE_NO_RECOMPILE : 0,
          &kernel, &notice));
      if (!notice.empty())
        load_notes_ += cat(load_notes_.empty() ? "" : "\n", "kernel ", k,
                           p.batch ? cat(" of the batch-", p.batch, " plan") : std::string(),
                           " (", p.kernels[k].backend, "): ", notice);
    } else {
      COLLAGE_RT_RETURN_IF_ERROR(create_native_kernel(p, k, *native_, &kernel));
    }
    r->kernels.push_back(std::move(kernel));
  }
  r->scheduler = make_sequential_scheduler(pool_.get());
  // A variant without a schedule of its own runs sequentially even when waves were asked for:
  // the choice is the artifact's, checked on the root plan.
  const bool waves = p.has_schedule && (options.executor == ExecutorChoice::waves ||
                                        (options.executor == ExecutorChoice::automatic &&
                                         p.schedule.preferred == waves::Executor::waves));
  if (waves) {
    // Kernels the schedule pins to fewer threads of their own get those variants built now
    // (oneDNN creates primitives per thread count), not in the first run.
    for (size_t k = 0; k < p.schedule.threads.size(); ++k)
      if (p.schedule.threads[k])
        COLLAGE_RT_RETURN_IF_ERROR(
            r->kernels[k]->prepare_threads(static_cast<int32_t>(p.schedule.threads[k])));
    r->scheduler = make_wave_scheduler(&p.schedule, std::move(r->scheduler));
  }
  for (const ConstantInfo& c : p.constants) r->plan.constants.push_back(c.data);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    Step& step = r->plan.steps.emplace_back();
    step.kernel = r->kernels[k].get();
    step.kernel_index = static_cast<uint32_t>(k);
    step.num_inputs = p.kernels[k].num_inputs;
    step.dynamic = p.kernels[k].dynamic;
    step.strings = p.kernels[k].strings;
    for (uint32_t t : p.kernels[k].args)
      step.args.push_back({p.tensors[t].storage, p.tensors[t].location, t, &p.tensors[t]});
  }
  return Status();
}

const Scheduler& LoadedModule::scheduler() const {
  return *runs_.back()->scheduler;
}

const LoadedModule::PlanRun& LoadedModule::run_for(int64_t batch) const {
  for (const auto& r : runs_)
    if (r->program->batch >= batch) return *r;
  return *runs_.back();
}

Status LoadedModule::check_caller_outputs(const Program& p) {
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const TensorInfo& t = p.tensors[p.outputs[i]];
    if (t.storage == Storage::dynamic)
      return error(Code::invalid_argument, "output ", i, " '", t.name, "' (",
                   type_string(t.dtype, t.shape), ") has a shape that depends on the data: run "
                   "the model with collage_module_run_outputs, which allocates the outputs");
    if (t.dtype == kStringDType)
      return error(Code::invalid_argument, "output ", i, " '", t.name, "' (",
                   type_string(t.dtype, t.shape), ") is a string tensor, whose bytes must outlive "
                   "the run: run the model with collage_module_run_outputs, which allocates the "
                   "outputs and keeps their strings until they are released");
  }
  return Status();
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
  if (p.dynamic_batch.max) return run_batch(inputs, outputs);
  COLLAGE_RT_RETURN_IF_ERROR(check_caller_outputs(p));
  std::vector<void*> in(p.inputs.size()), out(p.outputs.size());
  for (size_t i = 0; i < in.size(); ++i)
    COLLAGE_RT_RETURN_IF_ERROR(check_tensor("input", i, p.tensors[p.inputs[i]], inputs[i], &in[i]));
  for (size_t i = 0; i < out.size(); ++i)
    COLLAGE_RT_RETURN_IF_ERROR(
        check_tensor("output", i, p.tensors[p.outputs[i]], outputs[i], &out[i]));
  return execute(*runs_.back(), in, out);
}

Status LoadedModule::execute(const PlanRun& r, const std::vector<void*>& in,
                             const std::vector<void*>& out, DynamicValues* dynamic,
                             StringBytes* strings) const {
  const Program& p = *r.program;
  const bool profiling = profiler_.enabled();
  std::vector<StepTiming> timings;
  const auto start =
      profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  DynamicValues own;
  if (p.has_dynamic && !dynamic) dynamic = &own;
  if (dynamic) dynamic->resize(p.tensors.size());
  StringBytes own_strings;
  if (p.has_strings && !strings) strings = &own_strings;
  uint8_t* arena = r.acquire_arena();
  if (!arena)
    return error(Code::internal, "run: out of memory for a ", p.arena_bytes, "-byte arena");
  Frame frame{arena, in.data(), out.data(), profiling ? &timings : nullptr, dynamic, strings};
  Status s = r.scheduler->run(r.plan, frame);
  r.release_arena(arena);
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
      case Storage::dynamic:  // the caller's (run_outputs) to take
        break;
    }
    if (src && t.bytes) std::memmove(out[i], src, t.bytes);
  }
  if (profiling) profiler_.add_run(p, r.plan, timings, start, std::chrono::steady_clock::now());
  return Status();
}

}  // namespace collage::rt
