// ProgramRunner: readies a GPU program on device 0 and runs it.
#include "program_runner.h"

#include <algorithm>
#include <cstring>

#include "cuda_driver.h"
#include "library_steps.h"

namespace collage::rt_cuda {

namespace {

// The context must be current on the calling thread for every driver, cuBLAS and cuDNN call.
std::string make_current(const Driver& d, CUcontext context) {
  if (CUresult r = d.ctx_set_current(context); r != CUDA_SUCCESS)
    return "cuCtxSetCurrent: " + d.error(r);
  return "";
}

}  // namespace

std::string ProgramRunner::fail(const char* what, CUresult r) const {
  return std::string(what) + ": " + d_->error(r);
}

std::string ProgramRunner::create(GpuProgram program, const std::vector<uint64_t>& arg_bytes,
                                  int num_inputs, const std::vector<const void*>& constants,
                                  const std::vector<uint64_t>& constant_bytes,
                                  std::unique_ptr<ProgramRunner>* out) {
  if (std::string e = check_program(program, arg_bytes, constant_bytes); !e.empty()) return e;
  if (num_inputs < 0 || static_cast<size_t>(num_inputs) > arg_bytes.size())
    return "gpu program: " + std::to_string(num_inputs) + " inputs of " +
           std::to_string(arg_bytes.size()) + " arguments";
  std::string why;
  const Driver* d = cuda_driver(&why);
  if (d == nullptr) return why;
  std::unique_ptr<ProgramRunner> r(new ProgramRunner);
  r->d_ = d;
  r->program_ = std::move(program);
  r->arg_bytes_ = arg_bytes;
  r->num_inputs_ = num_inputs;
  int count = 0;
  if (CUresult e = d->device_count(&count); e != CUDA_SUCCESS || count < 1)
    return e != CUDA_SUCCESS ? r->fail("cuDeviceGetCount", e) : "no CUDA device";
  if (CUresult e = d->device_get(&r->device_, 0); e != CUDA_SUCCESS)
    return r->fail("cuDeviceGet", e);
  char name[256] = {};
  d->device_name(name, sizeof name, r->device_);
  r->device_name_ = name;
  if (CUresult e = d->ctx_retain(&r->context_, r->device_); e != CUDA_SUCCESS)
    return r->fail("cuDevicePrimaryCtxRetain", e);
  if (std::string e = make_current(*d, r->context_); !e.empty()) return e;
  if (CUresult e = d->stream_create(&r->stream_, CU_STREAM_NON_BLOCKING); e != CUDA_SUCCESS)
    return r->fail("cuStreamCreate", e);
  const GpuProgram& p = r->program_;
  if (CUresult e = d->mem_alloc(&r->arena_, std::max<uint64_t>(p.arena_bytes, 1));
      e != CUDA_SUCCESS)
    return "cannot allocate the arena of " + std::to_string(p.arena_bytes) +
           " bytes on the GPU: " + d->error(e);
  for (size_t i = 0; i < constants.size(); ++i) {
    if (CUresult e =
            d->copy_htod(r->arena_ + p.constant_offsets[i], constants[i], constant_bytes[i]);
        e != CUDA_SUCCESS)
      return "uploading constant " + std::to_string(i) + ": " + d->error(e);
  }
  for (size_t i = 0; i < p.images.size(); ++i) {
    CUmodule m = nullptr;
    if (CUresult e = d->module_load(&m, p.images[i].data()); e != CUDA_SUCCESS)
      return "cubin " + std::to_string(i) + " does not load on " + r->device_name_ + ": " +
             d->error(e);
    r->modules_.push_back(m);
  }
  r->functions_.assign(p.steps.size(), nullptr);
  r->conv_index_.assign(p.steps.size(), 0);
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const std::string step = "step " + std::to_string(i) + ": ";
    if (const auto* s = std::get_if<LaunchStep>(&p.steps[i])) {
      if (CUresult e =
              d->module_function(&r->functions_[i], r->modules_[s->image], s->function.c_str());
          e != CUDA_SUCCESS)
        return step + "cubin " + std::to_string(s->image) + " has no kernel " + s->function + ": " +
               d->error(e);
    } else if (std::holds_alternative<GemmStep>(p.steps[i]) && !r->gemms_) {
      if (std::string e = CublasGemms::create(r->stream_, &r->gemms_); !e.empty()) return step + e;
    } else if (const auto* c = std::get_if<ConvStep>(&p.steps[i])) {
      if (!r->convs_) {
        if (std::string e = CudnnConvolutions::create(r->stream_, &r->convs_); !e.empty())
          return step + e;
      }
      if (std::string e = r->convs_->add(*c, r->arena_, &r->conv_index_[i]); !e.empty())
        return step + e;
    }
  }
  *out = std::move(r);
  return "";
}

ProgramRunner::~ProgramRunner() {
  if (d_ == nullptr || context_ == nullptr) return;
  make_current(*d_, context_);
  if (stream_) d_->stream_synchronize(stream_);
  if (graph_exec_) d_->graph_exec_destroy(graph_exec_);
  convs_.reset();
  gemms_.reset();
  for (CUmodule m : modules_) d_->module_unload(m);
  if (arena_) d_->mem_free(arena_);
  if (stream_) d_->stream_destroy(stream_);
  d_->ctx_release(device_);
}

std::string ProgramRunner::enqueue_steps() {
  for (size_t i = 0; i < program_.steps.size(); ++i) {
    const Step& step = program_.steps[i];
    std::string e;
    if (const auto* s = std::get_if<LaunchStep>(&step)) {
      std::vector<CUdeviceptr> pointers;
      for (uint64_t offset : s->args) pointers.push_back(arena_ + offset);
      std::vector<void*> params;
      for (CUdeviceptr& ptr : pointers) params.push_back(&ptr);
      if (CUresult r = d_->launch(functions_[i], s->grid[0], s->grid[1], s->grid[2], s->block[0],
                                  s->block[1], s->block[2], s->shared_bytes, stream_, params.data(),
                                  nullptr);
          r != CUDA_SUCCESS)
        e = "launch of " + s->function + ": " + d_->error(r);
    } else if (const auto* g = std::get_if<GemmStep>(&step)) {
      e = gemms_->enqueue(*g, arena_);
    } else {
      e = convs_->enqueue(conv_index_[i], arena_);
    }
    if (!e.empty()) return "step " + std::to_string(i) + ": " + e;
  }
  return "";
}

std::string ProgramRunner::launch_steps() {
  if (graph_exec_) {
    if (CUresult r = d_->graph_launch(graph_exec_, stream_); r != CUDA_SUCCESS)
      return fail("cuGraphLaunch", r);
    return "";
  }
  if (!program_.use_graph || graph_tried_) return enqueue_steps();
  graph_tried_ = true;
  // Relaxed capture: cuBLAS and cuDNN may make calls that are not stream operations.
  if (CUresult r = d_->begin_capture(stream_, CU_STREAM_CAPTURE_MODE_RELAXED); r != CUDA_SUCCESS) {
    graph_note_ = fail("cuStreamBeginCapture", r);
    return enqueue_steps();
  }
  const std::string captured = enqueue_steps();
  CUgraph graph = nullptr;
  const CUresult ended = d_->end_capture(stream_, &graph);
  if (captured.empty() && ended == CUDA_SUCCESS && graph != nullptr) {
    const CUresult made = d_->graph_instantiate(&graph_exec_, graph, 0);
    if (made != CUDA_SUCCESS) {
      graph_exec_ = nullptr;
      graph_note_ = fail("cuGraphInstantiate", made);
    }
  } else {
    graph_note_ =
        !captured.empty() ? "capture failed: " + captured : fail("cuStreamEndCapture", ended);
  }
  if (graph) d_->graph_destroy(graph);
  if (graph_exec_) return launch_steps();
  return enqueue_steps();
}

std::string ProgramRunner::run(void* const* args) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (std::string e = make_current(*d_, context_); !e.empty()) return e;
  const size_t n = arg_bytes_.size();
  for (size_t i = 0; i < static_cast<size_t>(num_inputs_); ++i) {
    if (CUresult r =
            d_->copy_htod_async(arena_ + program_.arg_offsets[i], args[i], arg_bytes_[i], stream_);
        r != CUDA_SUCCESS)
      return "copying input " + std::to_string(i) + " to the GPU: " + d_->error(r);
  }
  if (std::string e = launch_steps(); !e.empty()) {
    d_->stream_synchronize(stream_);
    return e;
  }
  for (size_t i = num_inputs_; i < n; ++i) {
    if (CUresult r =
            d_->copy_dtoh_async(args[i], arena_ + program_.arg_offsets[i], arg_bytes_[i], stream_);
        r != CUDA_SUCCESS) {
      d_->stream_synchronize(stream_);
      return "copying output " + std::to_string(i - num_inputs_) + " from the GPU: " + d_->error(r);
    }
  }
  if (CUresult r = d_->stream_synchronize(stream_); r != CUDA_SUCCESS)
    return fail("running the gpu program", r);
  return "";
}

std::string ProgramRunner::time_steps(int warmup, int repeats, int runs_per_sample,
                                      std::vector<double>* ms) {
  if (warmup < 0 || repeats < 1 || runs_per_sample < 1)
    return "timing needs warmup >= 0, repeats >= 1 and runs_per_sample >= 1";
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (std::string e = make_current(*d_, context_); !e.empty()) return e;
  for (int i = 0; i < warmup; ++i)
    if (std::string e = launch_steps(); !e.empty()) return e;
  CUevent start = nullptr, stop = nullptr;
  if (CUresult r = d_->event_create(&start, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
    return fail("cuEventCreate", r);
  if (CUresult r = d_->event_create(&stop, CU_EVENT_DEFAULT); r != CUDA_SUCCESS) {
    d_->event_destroy(start);
    return fail("cuEventCreate", r);
  }
  std::string e;
  ms->clear();
  for (int i = 0; i < repeats && e.empty(); ++i) {
    CUresult r = d_->event_record(start, stream_);
    for (int j = 0; j < runs_per_sample && r == CUDA_SUCCESS && e.empty(); ++j) e = launch_steps();
    if (r == CUDA_SUCCESS && e.empty()) r = d_->event_record(stop, stream_);
    if (r == CUDA_SUCCESS && e.empty()) r = d_->event_synchronize(stop);
    float elapsed = 0;
    if (r == CUDA_SUCCESS && e.empty()) r = d_->event_elapsed(&elapsed, start, stop);
    if (r != CUDA_SUCCESS && e.empty()) e = fail("timing the gpu program", r);
    ms->push_back(static_cast<double>(elapsed) / runs_per_sample);
  }
  d_->stream_synchronize(stream_);
  d_->event_destroy(start);
  d_->event_destroy(stop);
  return e;
}

std::string ProgramRunner::describe() const {
  std::string s = device_name_ + ", " + std::to_string(program_.steps.size()) + " steps, " +
                  (graph_exec_           ? "replayed as a CUDA graph"
                   : graph_note_.empty() ? "launched step by step"
                                         : "launched step by step (" + graph_note_ + ")");
  if (gemms_) s += "; " + gemms_->version();
  for (size_t i = 0; convs_ && i < program_.steps.size(); ++i)
    if (std::holds_alternative<ConvStep>(program_.steps[i]))
      s += "; " + convs_->describe(conv_index_[i]);
  return s;
}

}  // namespace collage::rt_cuda
