// The compiler C API (include/collage/collage.h): a thin skin over the compile driver
// (include/collage/compiler.h).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "collage/collage.h"
#include "collage/compiler.h"
#include "status.h"

struct collage_compiler {
  collage::Compiler compiler;
};

namespace {

using collage::capi::guarded;
using collage::capi::make_status;

int32_t code_of(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kOk:
      return COLLAGE_STATUS_OK;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
      return COLLAGE_STATUS_INVALID_ARGUMENT;
    case absl::StatusCode::kNotFound:
      return COLLAGE_STATUS_NOT_FOUND;
    case absl::StatusCode::kUnimplemented:
      return COLLAGE_STATUS_UNSUPPORTED;
    case absl::StatusCode::kDataLoss:
      return COLLAGE_STATUS_CORRUPT;
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnavailable:
      return COLLAGE_STATUS_IO;
    default:
      return COLLAGE_STATUS_INTERNAL;
  }
}

collage_status_t* to_c(const absl::Status& s) {
  return s.ok() ? nullptr : make_status(code_of(s), std::string(s.message()));
}

collage_status_t* invalid(const char* message) {
  return collage_status_create(COLLAGE_STATUS_INVALID_ARGUMENT, message);
}

// A malloc'ed copy of `bytes` (the caller frees it with collage_free).
void* copy_out(std::string_view bytes) {
  void* p = std::malloc(bytes.size() + 1);
  if (!p) throw std::bad_alloc();
  std::memcpy(p, bytes.data(), bytes.size());
  static_cast<char*>(p)[bytes.size()] = '\0';
  return p;
}

// The caller's progress callback (collage_compile_options_t.progress); tell() is a no-op
// without one.
struct Progress {
  collage_compile_progress_fn fn = nullptr;
  void* user_data = nullptr;

  void tell(const char* phase, uint64_t done = 0, uint64_t total = 0, int32_t generation = 0,
            double best_ms = -1, const char* detail = "") const {
    if (!fn) return;
    collage_compile_progress_t p{sizeof p, phase, done, total, generation, best_ms, detail};
    fn(user_data, &p);
  }
};

// The driver's progress hooks telling `progress`: its steps, the placement's phases and the tree
// strategies.
void relay_progress(const Progress& progress, collage::CompileOptions& out) {
  if (!progress.fn) return;
  out.step_progress = [progress](const char* step) { progress.tell(step); };
  out.placement.progress = [progress](const collage::PlacementProgress& p) {
    // PlacementProgress::phase is one of a fixed set of literals; the callback gets static
    // storage, as collage.h promises.
    static constexpr const char* kPhases[] = {"candidates", "measure",   "op-level",
                                              "evolve",     "finalists", "done"};
    const char* phase = "placement";
    for (const char* name : kPhases)
      if (p.phase == name) phase = name;
    progress.tell(phase, p.measured, p.total, p.generation, p.best_ms);
  };
  out.tree_progress = [progress](const std::string& label) {
    progress.tell("tree-strategy", 0, 0, 0, -1, label.c_str());
  };
  out.batch_progress = [progress](int64_t, size_t index, size_t count) {
    progress.tell("batch", index, count);
  };
}

// The input shapes and the batch range of `o` (batch_min..batch_max; the dimension given as -1 is
// the batch, imported at each batch of the range).
absl::Status batch_range_of(const collage_compile_options_t& o, collage::CompileOptions& out) {
  const bool range = o.batch_max > 0;
  if (range && (o.batch_min < 1 || o.batch_max <= o.batch_min))
    return absl::InvalidArgumentError("batch range " + std::to_string(o.batch_min) + ".." +
                                      std::to_string(o.batch_max) +
                                      ": expected 1 <= batch_min < batch_max");
  out.batch.min = o.batch_min;
  out.batch.max = o.batch_max;
  if (o.num_batch_sizes > 0 && o.batch_sizes)
    out.batch.sizes.assign(o.batch_sizes, o.batch_sizes + o.num_batch_sizes);
  for (int32_t i = 0; i < o.num_input_shapes && o.input_shapes; ++i) {
    const collage_input_shape_t& s = o.input_shapes[i];
    if (!s.name || s.ndim < 0 || (s.ndim > 0 && !s.shape))
      return absl::InvalidArgumentError("input shape " + std::to_string(i) +
                                        ": NULL name or shape, or a negative rank");
    collage::Shape shape(s.shape, s.shape + s.ndim);
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] != -1) continue;
      if (!range || out.batch.axes.count(s.name))
        return absl::InvalidArgumentError(
            std::string("input shape '") + s.name + "': " +
            (range ? "more than one dimension is -1, the batch"
                   : "-1 marks the batch of a batch range: set batch_min and batch_max"));
      out.batch.axes[s.name] = static_cast<int>(d);
      shape[d] = o.batch_max;
    }
    out.import.onnx.input_shapes[s.name] = std::move(shape);
  }
  if (range && out.batch.axes.empty())
    return absl::InvalidArgumentError(
        "a batch range needs an input shape whose batch dimension is given as -1");
  return absl::OkStatus();
}

absl::Status options_of(const collage_compile_options_t* in, collage::CompileOptions* out_options) {
  collage::CompileOptions& out = *out_options;
  collage_compile_options_t o;
  collage_compile_options_init(&o);
  if (in) std::memcpy(&o, in, std::min<size_t>(in->struct_size, sizeof o));
  if (o.strategy && *o.strategy) out.placement.strategy = o.strategy;
  if (o.budget_seconds > 0) out.placement.time_budget_s = o.budget_seconds;
  out.placement.seed = o.seed;
  if (o.cost_db_path) out.placement.cost_db_path = o.cost_db_path;
  out.placement.code_cache = collage::code_cache_dir(out.placement.cost_db_path);
  for (const char* p = o.backends; p && *p;) {
    const char* comma = std::strchr(p, ',');
    std::string name(p, comma ? comma : p + std::strlen(p));
    if (!name.empty()) out.placement.backends.push_back(std::move(name));
    p = comma ? comma + 1 : nullptr;
  }
  // Generated code runs every operator and has a runtime form, so it takes what no library does
  // (the driver's default); "reference" must be asked for.
  if (o.fallback && *o.fallback) out.placement.fallback = o.fallback;
  out.placement.num_threads = o.num_threads;
  if (o.target && *o.target) {
    absl::StatusOr<std::string> cpu = collage::resolve_native_target(o.target);
    if (!cpu.ok())
      return absl::InvalidArgumentError(std::string("target: ") +
                                        std::string(cpu.status().message()));
    out.placement.target = *cpu;
  }
  // Values between convolutions blocked by one vector of the target (8 channels on AVX2).
  out.placement.channel_block = collage::native_channel_block(out.placement.target);
  if (o.tree_strategy && *o.tree_strategy) {
    auto mode = collage::parse_tree_strategy_mode(o.tree_strategy);
    if (!mode.ok()) return mode.status();
    out.tree_strategy = *mode;
  }
  if (o.executor && *o.executor) {
    auto executor = collage::parse_executor(o.executor);
    if (!executor.ok()) return executor.status();
    out.placement.executor = *executor;
  }
  if (o.zipmap && *o.zipmap) {
    const std::string_view zipmap = o.zipmap;
    if (zipmap != "refuse" && zipmap != "probabilities")
      return absl::InvalidArgumentError("zipmap: '" + std::string(zipmap) +
                                        "' is not refuse or probabilities");
    out.import.onnx.zipmap = zipmap == "probabilities" ? collage::ZipMapMode::probabilities
                                                       : collage::ZipMapMode::refuse;
  }
  relay_progress(Progress{o.progress, o.progress_user_data}, out);
  return batch_range_of(o, out);
}

}  // namespace

extern "C" {

COLLAGE_API const char* collage_compiler_version(void) {
  return COLLAGE_VERSION;
}

COLLAGE_API uint32_t collage_compiler_abi_version(void) {
  return COLLAGE_COMPILER_ABI_VERSION;
}

COLLAGE_API collage_status_t* collage_compiler_create(collage_compiler_t** compiler) {
  return guarded("collage_compiler_create", [&]() -> collage_status_t* {
    if (!compiler) return invalid("collage_compiler_create: NULL compiler pointer");
    *compiler = nullptr;
    auto c = collage::Compiler::create();
    if (!c.ok()) return to_c(c.status());
    *compiler = new collage_compiler{*std::move(c)};
    return nullptr;
  });
}

COLLAGE_API void collage_compiler_release(collage_compiler_t* compiler) {
  delete compiler;
}

COLLAGE_API collage_status_t* collage_compiler_load_plugin(collage_compiler_t* compiler,
                                                           const char* path) {
  return guarded("collage_compiler_load_plugin", [&]() -> collage_status_t* {
    if (!compiler || !path) return invalid("collage_compiler_load_plugin: NULL compiler or path");
    return to_c(compiler->compiler.load_plugin(path));
  });
}

COLLAGE_API void collage_compile_options_init_size(collage_compile_options_t* options,
                                                   size_t size) {
  if (!options || size < sizeof options->struct_size) return;
  collage_compile_options_t defaults{};
  defaults.struct_size = static_cast<uint32_t>(std::min(size, sizeof defaults));
  std::memcpy(options, &defaults, defaults.struct_size);
}

COLLAGE_API void(collage_compile_options_init)(collage_compile_options_t* options) {
  collage_compile_options_init_size(options, COLLAGE_COMPILE_OPTIONS_V1_SIZE);
}

COLLAGE_API collage_status_t* collage_compile(collage_compiler_t* compiler, const char* model_path,
                                              const collage_compile_options_t* options,
                                              const char* artifact_path, char** report_json) {
  return guarded("collage_compile", [&]() -> collage_status_t* {
    if (report_json) *report_json = nullptr;
    if (!compiler || !model_path || !artifact_path)
      return invalid("collage_compile: NULL compiler, model path or artifact path");
    collage::CompileOptions o;
    if (absl::Status s = options_of(options, &o); !s.ok()) return to_c(s);
    auto r = compiler->compiler.compile_to_file(collage::ModelSource::file(model_path), o,
                                                artifact_path);
    if (!r.ok()) return to_c(r.status());
    if (report_json) *report_json = static_cast<char*>(copy_out(r->report_json()));
    return nullptr;
  });
}

COLLAGE_API collage_status_t* collage_compile_file(collage_compiler_t* compiler,
                                                   const char* model_path,
                                                   const collage_compile_options_t* options,
                                                   const char* artifact_path, char** report_json) {
  return collage_compile(compiler, model_path, options, artifact_path, report_json);
}

COLLAGE_API collage_status_t* collage_compile_memory(collage_compiler_t* compiler,
                                                     const void* model, size_t model_size,
                                                     const collage_compile_options_t* options,
                                                     void** artifact, size_t* artifact_size,
                                                     char** report_json) {
  return guarded("collage_compile_memory", [&]() -> collage_status_t* {
    if (report_json) *report_json = nullptr;
    if (!compiler || (!model && model_size) || !artifact || !artifact_size)
      return invalid("collage_compile_memory: NULL compiler, model or artifact pointer");
    *artifact = nullptr;
    *artifact_size = 0;
    collage::CompileOptions o;
    if (absl::Status s = options_of(options, &o); !s.ok()) return to_c(s);
    auto r = compiler->compiler.compile(
        collage::ModelSource::onnx_bytes({static_cast<const uint8_t*>(model), model_size}), o);
    if (!r.ok()) return to_c(r.status());
    std::unique_ptr<void, decltype(&std::free)> out(copy_out(r->artifact), &std::free);
    if (report_json) *report_json = static_cast<char*>(copy_out(r->report_json()));
    *artifact = out.release();
    *artifact_size = r->artifact.size();
    return nullptr;
  });
}

COLLAGE_API void collage_free(void* buffer) {
  std::free(buffer);
}

}  // extern "C"
