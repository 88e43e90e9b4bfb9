// serialize_artifact: tensors and their storage, the arena plan, constants and the FlatBuffers
// plan, assembled into one file by assemble_artifact.
#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "artifact/artifact.h"
#include "artifact/artifact_file.h"
#include "artifact/memory_plan.h"
#include "artifact_generated.h"
#include "collage/executor.h"
#include "core/str_cat.h"
#include "format.h"

namespace collage {
namespace {

namespace fb = artifact::fb;

// A tensor of the plan before serialization.
struct PlanTensor {
  ValueId value = kNoValue;
  fb::Storage storage = fb::Storage::Arena;
  uint64_t location = 0;
  int32_t producer = -1;  // kernel index
  int32_t last_use = -1;  // kernel index
};

// Constants, stored once per buffer, each at a 64-byte aligned offset of the section.
class ConstantTable {
 public:
  uint32_t add(const Tensor& t) {
    auto key = std::make_tuple(t.raw(), t.dtype(), t.shape());
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(tensors_.size());
    tensors_.push_back(t);
    offsets_.push_back(bytes_);
    bytes_ = artifact::align_up(bytes_ + t.bytes());
    ids_.emplace(std::move(key), id);
    return id;
  }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  uint64_t offset(size_t id) const { return offsets_[id]; }
  uint64_t bytes() const { return bytes_; }
  std::string section() const {
    std::string s(bytes_, '\0');
    for (size_t i = 0; i < tensors_.size(); ++i)
      if (tensors_[i].bytes())
        std::memcpy(s.data() + offsets_[i], tensors_[i].raw(), tensors_[i].bytes());
    return s;
  }

 private:
  std::map<std::tuple<const void*, DType, Shape>, uint32_t> ids_;
  std::vector<Tensor> tensors_;
  std::vector<uint64_t> offsets_;
  uint64_t bytes_ = 0;
};

// The kernels' dataflow over graph values (value ids stand in for tensor ids).
std::vector<waves::ScheduleKernel> schedule_kernels(const std::vector<ArtifactKernel>& kernels) {
  std::vector<waves::ScheduleKernel> out;
  for (const ArtifactKernel& kernel : kernels) {
    waves::ScheduleKernel& k = out.emplace_back();
    for (size_t a = 0; a < kernel.args.size(); ++a)
      (a < kernel.num_inputs ? k.reads : k.writes).push_back(static_cast<uint32_t>(kernel.args[a]));
  }
  return out;
}

waves::ScheduleTensor::Where where_of(fb::Storage s) {
  switch (s) {
    case fb::Storage::Input:
      return waves::ScheduleTensor::Where::input;
    case fb::Storage::Output:
      return waves::ScheduleTensor::Where::output;
    case fb::Storage::Constant:
      return waves::ScheduleTensor::Where::constant;
    default:
      return waves::ScheduleTensor::Where::arena;
  }
}

flatbuffers::Offset<fb::WaveSchedule> write_schedule(flatbuffers::FlatBufferBuilder& fbb,
                                                     const waves::WaveSchedule& s) {
  std::vector<flatbuffers::Offset<fb::WaveWorker>> workers;
  for (const waves::WorkerList& w : s.workers) {
    std::vector<fb::WaveEntry> entries;
    for (const waves::WaveEntry& e : w.entries)
      entries.emplace_back(e.kernel, e.chunk, e.wait_begin, e.wait_end);
    std::vector<fb::WaveWait> waits;
    for (const waves::WaveWait& wt : w.waits) waits.emplace_back(wt.worker, wt.count);
    workers.push_back(fb::CreateWaveWorker(fbb, fbb.CreateVectorOfStructs(entries),
                                           fbb.CreateVectorOfStructs(waits)));
  }
  return fb::CreateWaveSchedule(
      fbb, /*version=*/1, fbb.CreateVector(s.chunks), fbb.CreateVector(workers),
      fbb.CreateVector(s.wave_of_kernel), s.num_waves, s.num_segments, s.waves_ms,
      s.sequential_ms,
      s.preferred == waves::Executor::waves ? fb::ExecutorKind::Waves
                                            : fb::ExecutorKind::Sequential,
      fbb.CreateVector(s.kernel_us), fbb.CreateVector(s.exclusive),
      s.threads.empty() ? 0 : fbb.CreateVector(s.threads));
}

}  // namespace

absl::StatusOr<std::string> serialize_artifact(const Graph& graph,
                                               const std::vector<ArtifactKernel>& kernels,
                                               const ArtifactOptions& options,
                                               ArtifactSummary* summary) {
  const bool with_schedule = options.waves.executor != waves::ExecutorChoice::none;
  std::vector<uint32_t> wave_of;  // per kernel, with a schedule: its dataflow wave
  if (with_schedule) {
    for (const ArtifactKernel& k : kernels)
      for (ValueId v : k.args)
        if (v < 0 || static_cast<size_t>(v) >= graph.values().size())
          return absl::InvalidArgumentError(str_cat("kernel '", k.name, "': an argument is no value"));
    wave_of = waves::dataflow_waves(schedule_kernels(kernels), graph.values().size());
    if (!std::is_sorted(wave_of.begin(), wave_of.end())) {
      std::vector<size_t> order(kernels.size());
      for (size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return wave_of[a] < wave_of[b]; });
      std::vector<ArtifactKernel> sorted;
      for (size_t k : order) sorted.push_back(kernels[k]);
      return serialize_artifact(graph, sorted, options, summary);
    }
  }
  // Tensors: graph inputs, then each kernel's new values, then constant graph outputs.
  std::vector<PlanTensor> tensors;
  std::vector<int32_t> tensor_of(graph.values().size(), -1);
  auto add_tensor = [&](ValueId v, fb::Storage storage, uint64_t location) {
    tensor_of[v] = static_cast<int32_t>(tensors.size());
    tensors.push_back({v, storage, location});
  };
  for (size_t i = 0; i < graph.inputs().size(); ++i)
    add_tensor(graph.inputs()[i], fb::Storage::Input, i);
  auto first_output_position = [&](ValueId v) -> int64_t {
    const auto& outs = graph.outputs();
    auto it = std::find(outs.begin(), outs.end(), v);
    return it == outs.end() ? -1 : it - outs.begin();
  };

  ConstantTable constants;
  std::vector<std::string> modules;
  std::vector<uint32_t> kernel_module;
  std::vector<std::vector<uint32_t>> kernel_constants;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const ArtifactKernel& kernel = kernels[k];
    const std::string label = str_cat("kernel ", k, " (", kernel.backend, ": ", kernel.name, ")");
    if (kernel.record.module.empty() || kernel.record.module == kReferenceBackend)
      return absl::InvalidArgumentError(
          str_cat(label, ": module '", kernel.record.module, "' has no runtime part"));
    if (kernel.num_inputs >= kernel.args.size())
      return absl::InvalidArgumentError(str_cat(label, ": no outputs"));
    if (kernel.task_count < 1)
      return absl::InvalidArgumentError(str_cat(label, ": task count ", kernel.task_count));
    for (size_t a = 0; a < kernel.args.size(); ++a) {
      const ValueId v = kernel.args[a];
      if (v < 0 || static_cast<size_t>(v) >= graph.values().size())
        return absl::InvalidArgumentError(str_cat(label, ": argument ", a, " is no value"));
      if (a < kernel.num_inputs) {
        if (tensor_of[v] < 0 || (tensors[tensor_of[v]].producer < 0 &&
                                 tensors[tensor_of[v]].storage != fb::Storage::Input))
          return absl::InvalidArgumentError(str_cat(label, " reads '", graph.value(v).name,
                                                    "' before any earlier kernel writes it"));
        tensors[tensor_of[v]].last_use = static_cast<int32_t>(k);
        continue;
      }
      if (tensor_of[v] >= 0)
        return absl::InvalidArgumentError(
            str_cat(label, " writes '", graph.value(v).name, "', which is already written"));
      const int64_t out = first_output_position(v);
      add_tensor(v, out >= 0 ? fb::Storage::Output : fb::Storage::Arena, out >= 0 ? out : 0);
      tensors.back().producer = tensors.back().last_use = static_cast<int32_t>(k);
    }
    auto m = std::find(modules.begin(), modules.end(), kernel.record.module);
    kernel_module.push_back(static_cast<uint32_t>(m - modules.begin()));
    if (m == modules.end()) modules.push_back(kernel.record.module);
    std::vector<uint32_t>& ids = kernel_constants.emplace_back();
    for (const Tensor& c : kernel.record.constants) {
      if (c.empty())
        return absl::InvalidArgumentError(str_cat(label, ": an empty constant tensor"));
      ids.push_back(constants.add(c));
    }
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ValueId v = graph.outputs()[i];
    if (tensor_of[v] >= 0) continue;
    const Tensor* c = graph.constant_of(v);
    if (!c)
      return absl::InvalidArgumentError(
          str_cat("graph output '", graph.value(v).name, "' is written by no kernel"));
    add_tensor(v, fb::Storage::Constant, constants.add(*c));
  }
  const bool needs_native =
      std::find(modules.begin(), modules.end(), kNativeModule) != modules.end();
  if (needs_native && options.native_library.empty())
    return absl::InvalidArgumentError(
        "the plan has native kernels, but no native library (ArtifactOptions::native_library) was "
        "given");

  // Arena offsets for the intermediates.
  std::vector<artifact::BufferLifetime> buffers;
  std::vector<size_t> buffer_tensor;
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (tensors[t].storage != fb::Storage::Arena) continue;
    // With a schedule, lifetimes count in waves: kernels of neighbouring waves may run at once.
    const int32_t first = tensors[t].producer, last = tensors[t].last_use;
    buffers.push_back({graph.value(tensors[t].value).type.bytes(),
                       with_schedule ? static_cast<int32_t>(wave_of[first]) : first,
                       with_schedule ? static_cast<int32_t>(wave_of[last]) : last});
    buffer_tensor.push_back(t);
  }
  const artifact::MemoryPlan memory = artifact::plan_memory(buffers, artifact::kAlignment);
  for (size_t b = 0; b < buffers.size(); ++b)
    tensors[buffer_tensor[b]].location = memory.offsets[b];

  waves::ScheduleResult schedule;
  if (with_schedule) {
    std::vector<waves::ScheduleTensor> schedule_tensors;
    for (const PlanTensor& t : tensors)
      schedule_tensors.push_back({where_of(t.storage), t.location, graph.value(t.value).type});
    std::vector<waves::ScheduleKernel> schedule_kernels_by_tensor;
    for (const ArtifactKernel& kernel : kernels) {
      waves::ScheduleKernel& k = schedule_kernels_by_tensor.emplace_back();
      k.kernel = kernel.kernel.get();
      k.task_count = kernel.task_count;
      for (size_t a = 0; a < kernel.args.size(); ++a)
        (a < kernel.num_inputs ? k.reads : k.writes)
            .push_back(static_cast<uint32_t>(tensor_of[kernel.args[a]]));
    }
    auto made = waves::make_artifact_schedule(schedule_kernels_by_tensor, schedule_tensors,
                                              memory.peak_bytes, options.waves);
    if (!made.ok())
      return absl::Status(made.status().code(),
                          str_cat("wave schedule: ", made.status().message()));
    schedule = *std::move(made);
  }

  // The plan.
  flatbuffers::FlatBufferBuilder fbb;
  auto shape_of = [&](const Shape& s) { return fbb.CreateVector(s.data(), s.size()); };
  std::vector<flatbuffers::Offset<fb::Tensor>> fb_tensors;
  for (const PlanTensor& t : tensors) {
    const Value& v = graph.value(t.value);
    fb_tensors.push_back(fb::CreateTensor(fbb, fbb.CreateString(v.name),
                                          static_cast<int32_t>(v.type.dtype),
                                          shape_of(v.type.shape), t.storage, t.location));
  }
  std::vector<flatbuffers::Offset<fb::Constant>> fb_constants;
  for (size_t i = 0; i < constants.tensors().size(); ++i) {
    const Tensor& c = constants.tensors()[i];
    fb_constants.push_back(fb::CreateConstant(fbb, static_cast<int32_t>(c.dtype()),
                                              shape_of(c.shape()), constants.offset(i), c.bytes()));
  }
  std::vector<flatbuffers::Offset<fb::Kernel>> fb_kernels;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const ArtifactKernel& kernel = kernels[k];
    std::vector<uint32_t> args;
    for (ValueId v : kernel.args) args.push_back(static_cast<uint32_t>(tensor_of[v]));
    fb_kernels.push_back(fb::CreateKernel(
        fbb, fbb.CreateString(kernel.name), fbb.CreateString(kernel.backend), kernel_module[k],
        fbb.CreateString(kernel.record.entry), fbb.CreateVector(kernel.record.params),
        fbb.CreateVector(kernel_constants[k]), fbb.CreateVector(args),
        static_cast<uint32_t>(kernel.num_inputs), kernel.task_count));
  }
  std::vector<uint32_t> inputs, outputs;
  for (ValueId v : graph.inputs()) inputs.push_back(static_cast<uint32_t>(tensor_of[v]));
  for (ValueId v : graph.outputs()) outputs.push_back(static_cast<uint32_t>(tensor_of[v]));
  auto plan =
      fb::CreatePlan(fbb, fbb.CreateString(graph.name()), fbb.CreateVectorOfStrings(modules),
                     fbb.CreateVector(fb_tensors), fbb.CreateVector(fb_constants),
                     fbb.CreateVector(fb_kernels), fbb.CreateVector(inputs),
                     fbb.CreateVector(outputs), memory.peak_bytes, memory.unshared_bytes,
                     with_schedule ? write_schedule(fbb, schedule.schedule) : 0);
  fbb.Finish(plan, fb::PlanIdentifier());

  std::vector<artifact::FileSection> sections;
  sections.push_back(
      {static_cast<uint32_t>(artifact::SectionKind::plan), 0,
       std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize())});
  if (constants.bytes())
    sections.push_back(
        {static_cast<uint32_t>(artifact::SectionKind::constants), 0, constants.section()});
  if (!options.native_library.empty())
    sections.push_back(
        {static_cast<uint32_t>(artifact::SectionKind::native_code), 0, options.native_library});
  std::string file = artifact::assemble_artifact(sections);
  if (summary) {
    summary->file_bytes = file.size();
    summary->constant_bytes = constants.bytes();
    summary->native_code_bytes = options.native_library.size();
    summary->arena_bytes = memory.peak_bytes;
    summary->unshared_bytes = memory.unshared_bytes;
    summary->kernels = kernels.size();
    summary->modules = modules;
    summary->has_schedule = with_schedule;
    if (with_schedule) {
      const waves::WaveSchedule& w = schedule.schedule;
      summary->workers = static_cast<uint32_t>(w.workers.size());
      summary->num_waves = w.num_waves;
      summary->num_segments = w.num_segments;
      summary->exclusive_kernels =
          static_cast<uint32_t>(std::count(w.exclusive.begin(), w.exclusive.end(), 1));
      summary->predicted_us = schedule.predicted_us;
      summary->waves_ms = w.waves_ms;
      summary->sequential_ms = w.sequential_ms;
      summary->executor = w.preferred == waves::Executor::waves ? "waves" : "sequential";
    }
  }
  return file;
}

}  // namespace collage
