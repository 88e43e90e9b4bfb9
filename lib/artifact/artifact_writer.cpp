// serialize_artifact: tensors and their storage, the arena plan, constants and the FlatBuffers
// plan, laid out as one file (artifact::FileLayout) over the constants' own buffers.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "artifact/artifact.h"
#include "artifact/artifact_file.h"
#include "artifact/string_table.h"
#include "artifact_generated.h"
#include "collage/executor.h"
#include "core/memory_plan.h"
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

// Constants, stored once per buffer, each at a 64-byte aligned offset of the section. With
// `by_content`, also once per content: the plans of a dynamic-batch artifact come from separate
// imports, whose equal weights are different buffers.
class ConstantTable {
 public:
  explicit ConstantTable(bool by_content = false) : by_content_(by_content) {}

  uint32_t add(const Tensor& t) {
    auto key = std::make_tuple(t.raw(), t.dtype(), t.shape());
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    // A str constant is stored as its string table; any other as its bytes.
    std::string table = t.dtype() == DType::str ? artifact::encode_string_table(t) : std::string();
    const std::string_view stored =
        t.dtype() == DType::str
            ? std::string_view(table)
            : std::string_view(static_cast<const char*>(t.raw()), t.bytes());
    uint64_t hash = 0;
    if (by_content_) {
      hash = content_hash(stored);
      for (uint32_t id : by_hash_[{t.dtype(), t.shape(), hash}])
        if (stored_bytes(id) == stored) return id;
    }
    const uint32_t id = static_cast<uint32_t>(tensors_.size());
    tensors_.push_back(t);
    tables_.push_back(std::move(table));
    offsets_.push_back(bytes_);
    bytes_ = artifact::align_up(bytes_ + stored.size());
    ids_.emplace(std::move(key), id);
    if (by_content_) by_hash_[{t.dtype(), t.shape(), hash}].push_back(id);
    return id;
  }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  uint64_t offset(size_t id) const { return offsets_[id]; }
  // What constant `id` takes in the section.
  uint64_t size(size_t id) const { return stored_bytes(id).size(); }
  uint64_t bytes() const { return bytes_; }
  // The section as pieces over the constants' own buffers (a str constant's table copied into
  // `image`), which `image` keeps alive.
  artifact::SectionPieces section(ArtifactImage& image) const {
    artifact::SectionPieces s{static_cast<uint32_t>(artifact::SectionKind::constants), 0, bytes_,
                              {}};
    for (size_t i = 0; i < tensors_.size(); ++i) {
      std::string_view b = stored_bytes(i);
      if (tensors_[i].dtype() == DType::str) {
        image.owned.push_back(std::make_shared<const std::string>(tables_[i]));
        b = *image.owned.back();
      } else {
        image.constants.push_back(tensors_[i]);
      }
      if (!b.empty()) s.pieces.emplace_back(offsets_[i], b);
    }
    return s;
  }
 private:
  std::string_view stored_bytes(size_t id) const {
    const Tensor& t = tensors_[id];
    if (t.dtype() == DType::str) return tables_[id];
    return {static_cast<const char*>(t.raw()), t.bytes()};
  }
  // FNV-1a over the bytes.
  static uint64_t content_hash(std::string_view b) {
    uint64_t h = 1469598103934665603ull;
    for (char c : b) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    return h;
  }

  bool by_content_;
  std::map<std::tuple<const void*, DType, Shape>, uint32_t> ids_;
  std::map<std::tuple<DType, Shape, uint64_t>, std::vector<uint32_t>> by_hash_;
  std::vector<Tensor> tensors_;
  std::vector<std::string> tables_;  // per constant: a str one's string table, else empty
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

// The root plan's dynamic-batch fields (none by default), made before its table.
struct RootFields {
  flatbuffers::Offset<fb::DynamicBatch> dynamic_batch = 0;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Plan>>> variants = 0;
};

// The plan's tables before serialization: tensors, runtime modules, and each kernel's constants
// in the artifact's shared constant table.
struct PlanTables {
  explicit PlanTables(ConstantTable& shared) : constants(shared) {}

  std::vector<PlanTensor> tensors;
  std::vector<int32_t> tensor_of;  // per graph value: its tensor, or -1
  ConstantTable& constants;
  std::vector<std::string> modules;  // in first-use order
  std::vector<uint32_t> kernel_module;
  std::vector<std::vector<uint32_t>> kernel_constants;

  void add_tensor(ValueId v, fb::Storage storage, uint64_t location) {
    tensor_of[v] = static_cast<int32_t>(tensors.size());
    tensors.push_back({v, storage, location});
  }
};

// Whether some kernel argument has a data-dependent shape: such values live outside the arena,
// sized per run (Storage::Dynamic), and their kernels run one at a time, so the plan has no wave
// schedule.
bool has_dynamic_values(const Graph& graph, const std::vector<ArtifactKernel>& kernels) {
  for (const ArtifactKernel& k : kernels)
    for (ValueId v : k.args)
      if (v >= 0 && static_cast<size_t>(v) < graph.values().size() &&
          graph.value(v).type.is_dynamic())
        return true;
  return false;
}

// Whether the plan holds a str value (format version 3): its string kernels run one at a time,
// so it has no wave schedule either.
bool has_string_values(const Graph& graph, const std::vector<ArtifactKernel>& kernels) {
  for (ValueId v : graph.inputs())
    if (graph.value(v).type.dtype == DType::str) return true;
  for (ValueId v : graph.outputs())
    if (graph.value(v).type.dtype == DType::str) return true;
  for (const ArtifactKernel& k : kernels)
    for (ValueId v : k.args)
      if (v >= 0 && static_cast<size_t>(v) < graph.values().size() &&
          graph.value(v).type.dtype == DType::str)
        return true;
  return false;
}

// With a schedule: each kernel's dataflow wave, after checking that every argument is a value of
// `graph`. `sorted` is set when the kernels are not in wave order: the plan is then written for
// it, its kernels stably sorted by wave.
absl::StatusOr<std::vector<uint32_t>> kernel_waves(
    const Graph& graph, const std::vector<ArtifactKernel>& kernels,
    std::optional<std::vector<ArtifactKernel>>* sorted) {
  for (const ArtifactKernel& k : kernels)
    for (ValueId v : k.args)
      if (v < 0 || static_cast<size_t>(v) >= graph.values().size())
        return absl::InvalidArgumentError(
            str_cat("kernel '", k.name, "': an argument is no value"));
  std::vector<uint32_t> wave_of =
      waves::dataflow_waves(schedule_kernels(kernels), graph.values().size());
  if (!std::is_sorted(wave_of.begin(), wave_of.end())) {
    std::vector<size_t> order(kernels.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return wave_of[a] < wave_of[b]; });
    sorted->emplace();
    for (size_t k : order) (*sorted)->push_back(kernels[k]);
  }
  return wave_of;
}

// Kernel `k`'s arguments, module and constants added to `t`, checking that it reads only what an
// earlier kernel (or the caller) wrote and writes each value once.
absl::Status add_kernel(const Graph& graph, const ArtifactKernel& kernel, size_t k, PlanTables& t) {
  const std::string label = str_cat("kernel ", k, " (", kernel.backend, ": ", kernel.name, ")");
  if (kernel.record.module.empty() || kernel.record.module == kReferenceBackend)
    return absl::InvalidArgumentError(
        str_cat(label, ": module '", kernel.record.module, "' has no runtime part"));
  if (kernel.num_inputs >= kernel.args.size())
    return absl::InvalidArgumentError(str_cat(label, ": no outputs"));
  if (kernel.task_count < 1)
    return absl::InvalidArgumentError(str_cat(label, ": task count ", kernel.task_count));
  const auto& outs = graph.outputs();
  for (size_t a = 0; a < kernel.args.size(); ++a) {
    const ValueId v = kernel.args[a];
    if (v < 0 || static_cast<size_t>(v) >= graph.values().size())
      return absl::InvalidArgumentError(str_cat(label, ": argument ", a, " is no value"));
    if (a < kernel.num_inputs) {
      if (t.tensor_of[v] < 0 || (t.tensors[t.tensor_of[v]].producer < 0 &&
                                 t.tensors[t.tensor_of[v]].storage != fb::Storage::Input))
        return absl::InvalidArgumentError(str_cat(label, " reads '", graph.value(v).name,
                                                  "' before any earlier kernel writes it"));
      t.tensors[t.tensor_of[v]].last_use = static_cast<int32_t>(k);
      continue;
    }
    if (t.tensor_of[v] >= 0)
      return absl::InvalidArgumentError(
          str_cat(label, " writes '", graph.value(v).name, "', which is already written"));
    auto out = std::find(outs.begin(), outs.end(), v);
    if (graph.value(v).type.is_dynamic())
      t.add_tensor(v, fb::Storage::Dynamic, 0);
    else if (out != outs.end())
      t.add_tensor(v, fb::Storage::Output, static_cast<uint64_t>(out - outs.begin()));
    else
      t.add_tensor(v, fb::Storage::Arena, 0);
    t.tensors.back().producer = t.tensors.back().last_use = static_cast<int32_t>(k);
  }
  auto m = std::find(t.modules.begin(), t.modules.end(), kernel.record.module);
  t.kernel_module.push_back(static_cast<uint32_t>(m - t.modules.begin()));
  if (m == t.modules.end()) t.modules.push_back(kernel.record.module);
  std::vector<uint32_t>& ids = t.kernel_constants.emplace_back();
  for (const Tensor& c : kernel.record.constants) {
    if (c.empty()) return absl::InvalidArgumentError(str_cat(label, ": an empty constant tensor"));
    ids.push_back(t.constants.add(c));
  }
  return absl::OkStatus();
}

// Tensors: graph inputs, then each kernel's new values, then constant graph outputs.
absl::Status plan_tables(const Graph& graph, const std::vector<ArtifactKernel>& kernels,
                         PlanTables& t) {
  t.tensor_of.assign(graph.values().size(), -1);
  for (size_t i = 0; i < graph.inputs().size(); ++i)
    t.add_tensor(graph.inputs()[i], fb::Storage::Input, i);
  for (size_t k = 0; k < kernels.size(); ++k)
    if (absl::Status s = add_kernel(graph, kernels[k], k, t); !s.ok()) return s;
  for (ValueId v : graph.outputs()) {
    if (t.tensor_of[v] >= 0) continue;
    const Tensor* c = graph.constant_of(v);
    if (!c)
      return absl::InvalidArgumentError(
          str_cat("graph output '", graph.value(v).name, "' is written by no kernel"));
    t.add_tensor(v, fb::Storage::Constant, t.constants.add(*c));
  }
  return absl::OkStatus();
}

// Arena offsets for the intermediates of `t` (set in place). With a schedule, lifetimes count in
// waves: kernels of neighbouring waves may run at once.
MemoryPlan plan_arena(const Graph& graph, const std::vector<uint32_t>& wave_of, PlanTables& t) {
  const bool by_wave = !wave_of.empty();
  std::vector<BufferLifetime> buffers;
  std::vector<size_t> buffer_tensor;
  for (size_t i = 0; i < t.tensors.size(); ++i) {
    if (t.tensors[i].storage != fb::Storage::Arena) continue;
    const int32_t first = t.tensors[i].producer, last = t.tensors[i].last_use;
    buffers.push_back({artifact::run_bytes(graph.value(t.tensors[i].value).type),
                       by_wave ? static_cast<int32_t>(wave_of[first]) : first,
                       by_wave ? static_cast<int32_t>(wave_of[last]) : last});
    buffer_tensor.push_back(i);
  }
  MemoryPlan memory = plan_memory(buffers, artifact::kAlignment);
  for (size_t b = 0; b < buffers.size(); ++b)
    t.tensors[buffer_tensor[b]].location = memory.offsets[b];
  return memory;
}

// The wave schedule of the kernels over the planned tensors (profiled on the live kernels).
absl::StatusOr<waves::ScheduleResult> plan_schedule(const Graph& graph,
                                                    const std::vector<ArtifactKernel>& kernels,
                                                    const PlanTables& t, uint64_t arena_bytes,
                                                    const waves::WaveOptions& options) {
  std::vector<waves::ScheduleTensor> tensors;
  for (const PlanTensor& p : t.tensors)
    tensors.push_back({where_of(p.storage), p.location, graph.value(p.value).type});
  std::vector<waves::ScheduleKernel> by_tensor;
  for (const ArtifactKernel& kernel : kernels) {
    waves::ScheduleKernel& k = by_tensor.emplace_back();
    k.kernel = kernel.kernel.get();
    k.task_count = kernel.task_count;
    for (size_t a = 0; a < kernel.args.size(); ++a)
      (a < kernel.num_inputs ? k.reads : k.writes)
          .push_back(static_cast<uint32_t>(t.tensor_of[kernel.args[a]]));
  }
  auto made = waves::make_artifact_schedule(by_tensor, tensors, arena_bytes, options);
  if (!made.ok())
    return absl::Status(made.status().code(), str_cat("wave schedule: ", made.status().message()));
  return made;
}

// The FlatBuffers plan table: tensors, the constants so far, kernels, inputs, outputs, the memory
// plan, the schedule (when given), the batch and the root's dynamic-batch fields.
flatbuffers::Offset<fb::Plan> plan_table(flatbuffers::FlatBufferBuilder& fbb, const Graph& graph,
                                         const std::vector<ArtifactKernel>& kernels,
                                         const PlanTables& t, const MemoryPlan& memory,
                                         const waves::WaveSchedule* schedule, int64_t batch,
                                         const RootFields& root) {
  auto shape_of = [&](const Shape& s) { return fbb.CreateVector(s.data(), s.size()); };
  std::vector<flatbuffers::Offset<fb::Tensor>> fb_tensors;
  for (const PlanTensor& p : t.tensors) {
    const Value& v = graph.value(p.value);
    fb_tensors.push_back(fb::CreateTensor(fbb, fbb.CreateString(v.name),
                                          static_cast<int32_t>(v.type.dtype),
                                          shape_of(v.type.shape), p.storage, p.location));
  }
  std::vector<flatbuffers::Offset<fb::Constant>> fb_constants;
  for (size_t i = 0; i < t.constants.tensors().size(); ++i) {
    const Tensor& c = t.constants.tensors()[i];
    fb_constants.push_back(fb::CreateConstant(fbb, static_cast<int32_t>(c.dtype()),
                                              shape_of(c.shape()), t.constants.offset(i),
                                              t.constants.size(i)));
  }
  std::vector<flatbuffers::Offset<fb::Kernel>> fb_kernels;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const ArtifactKernel& kernel = kernels[k];
    std::vector<uint32_t> args;
    for (ValueId v : kernel.args) args.push_back(static_cast<uint32_t>(t.tensor_of[v]));
    fb_kernels.push_back(fb::CreateKernel(
        fbb, fbb.CreateString(kernel.name), fbb.CreateString(kernel.backend), t.kernel_module[k],
        fbb.CreateString(kernel.record.entry), fbb.CreateVector(kernel.record.params),
        fbb.CreateVector(t.kernel_constants[k]), fbb.CreateVector(args),
        static_cast<uint32_t>(kernel.num_inputs), kernel.task_count));
  }
  std::vector<uint32_t> inputs, outputs;
  for (ValueId v : graph.inputs()) inputs.push_back(static_cast<uint32_t>(t.tensor_of[v]));
  for (ValueId v : graph.outputs()) outputs.push_back(static_cast<uint32_t>(t.tensor_of[v]));
  return fb::CreatePlan(fbb, fbb.CreateString(graph.name()), fbb.CreateVectorOfStrings(t.modules),
                        fbb.CreateVector(fb_tensors), fbb.CreateVector(fb_constants),
                        fbb.CreateVector(fb_kernels), fbb.CreateVector(inputs),
                        fbb.CreateVector(outputs), memory.peak_bytes, memory.unshared_bytes,
                        schedule ? write_schedule(fbb, *schedule) : 0, batch, root.dynamic_batch,
                        root.variants);
}

// The plan's figures (the file's sizes are assemble's).
void fill_summary(const PlanTables& t, const MemoryPlan& memory, size_t num_kernels,
                  uint32_t format_version, const waves::ScheduleResult* schedule,
                  ArtifactSummary& summary) {
  summary.format_version = format_version;
  summary.arena_bytes = memory.peak_bytes;
  summary.unshared_bytes = memory.unshared_bytes;
  summary.kernels = num_kernels;
  summary.modules = t.modules;
  summary.has_schedule = schedule != nullptr;
  if (!schedule) return;
  const waves::WaveSchedule& w = schedule->schedule;
  summary.workers = static_cast<uint32_t>(w.workers.size());
  summary.num_waves = w.num_waves;
  summary.num_segments = w.num_segments;
  summary.exclusive_kernels =
      static_cast<uint32_t>(std::count(w.exclusive.begin(), w.exclusive.end(), 1));
  summary.pinned_kernels = static_cast<uint32_t>(
      std::count_if(w.threads.begin(), w.threads.end(), [](uint32_t t) { return t > 0; }));
  summary.predicted_us = schedule->predicted_us;
  summary.teams_measured = schedule->teams_measured;
  summary.waves_ms = w.waves_ms;
  summary.sequential_ms = w.sequential_ms;
  summary.executor = w.preferred == waves::Executor::waves ? "waves" : "sequential";
}

// One plan table, written into `fbb` with its constants added to the shared `constants`; the
// figures go to `summary`. `batch`: the batch the plan runs (0 when the artifact has no dynamic
// batch).
absl::StatusOr<flatbuffers::Offset<fb::Plan>> write_plan(flatbuffers::FlatBufferBuilder& fbb,
                                                         ConstantTable& constants,
                                                         const Graph& graph,
                                                         const std::vector<ArtifactKernel>& kernels,
                                                         const ArtifactOptions& options,
                                                         int64_t batch, ArtifactSummary& summary,
                                                         const RootFields& root = {}) {
  const bool dynamic = has_dynamic_values(graph, kernels);
  const bool strings = has_string_values(graph, kernels);
  const bool with_schedule =
      !dynamic && !strings && options.waves.executor != waves::ExecutorChoice::none;
  std::vector<uint32_t> wave_of;  // per kernel, with a schedule: its dataflow wave
  if (with_schedule) {
    std::optional<std::vector<ArtifactKernel>> sorted;
    auto waves_of = kernel_waves(graph, kernels, &sorted);
    if (!waves_of.ok()) return waves_of.status();
    if (sorted) return write_plan(fbb, constants, graph, *sorted, options, batch, summary, root);
    wave_of = *std::move(waves_of);
  }
  PlanTables t(constants);
  if (absl::Status s = plan_tables(graph, kernels, t); !s.ok()) return s;
  if (std::find(t.modules.begin(), t.modules.end(), kNativeModule) != t.modules.end() &&
      options.native_library.empty())
    return absl::InvalidArgumentError(
        "the plan has native kernels, but no native library (ArtifactOptions::native_library) was "
        "given");
  const MemoryPlan memory = plan_arena(graph, wave_of, t);
  std::optional<waves::ScheduleResult> schedule;
  if (with_schedule) {
    auto made = plan_schedule(graph, kernels, t, memory.peak_bytes, options.waves);
    if (!made.ok()) return made.status();
    schedule = *std::move(made);
  }
  fill_summary(t, memory, kernels.size(), strings ? 3 : dynamic ? 2 : 1,
               schedule ? &*schedule : nullptr, summary);
  return plan_table(fbb, graph, kernels, t, memory, schedule ? &schedule->schedule : nullptr,
                    batch, root);
}

// The file: the plan section (a finished FlatBuffer), the constants and the native code.
ArtifactImage assemble(const flatbuffers::FlatBufferBuilder& fbb, const ConstantTable& constants,
                       const ArtifactOptions& options, ArtifactSummary* summary,
                       const ArtifactSummary& figures) {
  ArtifactImage image;
  std::vector<artifact::SectionPieces> sections;
  auto add = [&](artifact::SectionKind kind, std::string bytes) {
    image.owned.push_back(std::make_shared<const std::string>(std::move(bytes)));
    const std::string& b = *image.owned.back();
    sections.push_back({static_cast<uint32_t>(kind), 0, b.size(), {{0, std::string_view(b)}}});
  };
  add(artifact::SectionKind::plan,
      std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()));
  if (constants.bytes()) sections.push_back(constants.section(image));
  if (!options.native_library.empty())
    add(artifact::SectionKind::native_code, options.native_library);
  image.layout =
      std::make_shared<const artifact::FileLayout>(std::move(sections), figures.format_version);
  if (summary) {
    *summary = figures;
    summary->file_bytes = image.size();
    summary->constant_bytes = constants.bytes();
    summary->native_code_bytes = options.native_library.size();
  }
  return image;
}

}  // namespace

absl::StatusOr<std::string> serialize_artifact(const Graph& graph,
                                               const std::vector<ArtifactKernel>& kernels,
                                               const ArtifactOptions& options,
                                               ArtifactSummary* summary) {
  auto image = serialize_artifact_image(graph, kernels, options, summary);
  if (!image.ok()) return image.status();
  return image->bytes();
}

absl::StatusOr<ArtifactImage> serialize_artifact_image(const Graph& graph,
                                                       const std::vector<ArtifactKernel>& kernels,
                                                       const ArtifactOptions& options,
                                                       ArtifactSummary* summary) {
  flatbuffers::FlatBufferBuilder fbb;
  ConstantTable constants;
  ArtifactSummary figures;
  auto plan = write_plan(fbb, constants, graph, kernels, options, /*batch=*/0, figures);
  if (!plan.ok()) return plan.status();
  fbb.Finish(*plan, fb::PlanIdentifier());
  return assemble(fbb, constants, options, summary, figures);
}

absl::StatusOr<std::string> serialize_batch_artifact(const std::vector<BatchKernels>& plans,
                                                     const DynamicBatchInfo& info,
                                                     const ArtifactOptions& options,
                                                     ArtifactSummary* summary) {
  if (plans.empty() || plans.back().batch != info.max || info.min < 1 ||
      plans.front().batch < info.min)
    return absl::InvalidArgumentError(
        str_cat("dynamic batch ", info.min, "..", info.max, ": the plans must run batches in that "
                "range, the largest last"));
  for (size_t i = 0; i < plans.size(); ++i) {
    const Graph& g = *plans[i].graph;
    if ((i && plans[i].batch <= plans[i - 1].batch) ||
        g.inputs().size() != info.input_axes.size() ||
        g.outputs().size() != info.output_axes.size())
      return absl::InvalidArgumentError(
          str_cat("dynamic batch: plan ", i, " (batch ", plans[i].batch, ") has ",
                  g.inputs().size(), " inputs and ", g.outputs().size(), " outputs, or its batch "
                  "does not ascend"));
  }
  flatbuffers::FlatBufferBuilder fbb;
  ConstantTable constants(/*by_content=*/true);
  ArtifactSummary figures;
  if (info.padded)
    for (const BatchKernels& p : plans)
      for (const Value& v : p.graph->values())
        if (v.type.is_dynamic())
          return absl::InvalidArgumentError(
              str_cat("dynamic batch: value '", v.name, "' has a data-dependent shape (",
                      type_to_string(v.type), "), so batch ", p.batch, "'s plan cannot run a "
                      "smaller batch padded: every batch of the range needs a plan"));
  std::vector<flatbuffers::Offset<fb::Plan>> variants;
  for (size_t i = 0; i + 1 < plans.size(); ++i) {
    ArtifactSummary ignored;
    auto plan = write_plan(fbb, constants, *plans[i].graph, plans[i].kernels, options,
                           plans[i].batch, ignored);
    if (!plan.ok())
      return absl::Status(plan.status().code(), str_cat("batch ", plans[i].batch, ": ",
                                                        plan.status().message()));
    variants.push_back(*plan);
  }
  // The root plan is written last, with the dynamic-batch fields.
  const BatchKernels& root = plans.back();
  RootFields fields;
  fields.variants = fbb.CreateVector(variants);
  fields.dynamic_batch =
      fb::CreateDynamicBatch(fbb, info.min, info.max, fbb.CreateVector(info.input_axes),
                             fbb.CreateVector(info.output_axes), info.padded);
  auto plan = write_plan(fbb, constants, *root.graph, root.kernels, options, root.batch, figures,
                         fields);
  if (!plan.ok())
    return absl::Status(plan.status().code(),
                        str_cat("batch ", root.batch, ": ", plan.status().message()));
  fbb.Finish(*plan, fb::PlanIdentifier());
  for (const BatchKernels& p : plans) figures.batches.push_back(p.batch);
  return assemble(fbb, constants, options, summary, figures).bytes();
}

}  // namespace collage
