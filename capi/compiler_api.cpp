// The compiler C API (include/collage/collage.h): a thin skin over import, passes, placement
// (optimize) and the artifact writer.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <nlohmann/json.hpp>

#include "artifact/artifact.h"
#include "collage/backend_loader.h"
#include "collage/backends/dnnl.h"
#include "collage/backends/dynamic.h"
#include "collage/backends/eigen.h"
#include "collage/backends/native.h"
#include "collage/backends/openvino.h"
#include "collage/backends/trees.h"
#include "collage/collage.h"
#include "collage/executor.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/placement.h"
#include "collage/trees.h"
#include "io/file_io.h"
#include "placement/batch_variants.h"
#include "placement/tree_strategy.h"
#include "status.h"

struct collage_compiler {
  collage::Context ctx;
  collage::BackendRegistry backends;
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

struct Options {
  collage::PlacementOptions placement;
  collage::ModelImportOptions import;
  collage::ArtifactOptions artifact;
  collage::TreeStrategyMode tree_strategy;  // measured by default
  collage::BatchRange batch;                // batch.max 0: no batch range
  Progress progress;
};

absl::Status options_of(const collage_compile_options_t* in, Options* out_options) {
  Options& out = *out_options;
  collage_compile_options_t o;
  collage_compile_options_init(&o);
  if (in) std::memcpy(&o, in, std::min<size_t>(in->struct_size, sizeof o));
  if (o.strategy && *o.strategy) out.placement.strategy = o.strategy;
  if (o.budget_seconds > 0) out.placement.time_budget_s = o.budget_seconds;
  out.placement.seed = o.seed;
  if (o.cost_db_path) out.placement.cost_db_path = o.cost_db_path;
  out.placement.code_cache = collage::code_cache_dir(out.placement.cost_db_path);
  out.artifact.build.code_cache = out.placement.code_cache;
  for (const char* p = o.backends; p && *p;) {
    const char* comma = std::strchr(p, ',');
    std::string name(p, comma ? comma : p + std::strlen(p));
    if (!name.empty()) out.placement.backends.push_back(std::move(name));
    p = comma ? comma + 1 : nullptr;
  }
  // Generated code runs every operator and has a runtime form, so it takes what no library does
  // (as in the CLI); "reference" must be asked for.
  out.placement.fallback = (o.fallback && *o.fallback) ? o.fallback : "native";
  out.placement.num_threads = o.num_threads;
  out.artifact.build.num_threads = o.num_threads;
  if (o.target && *o.target) {
    absl::StatusOr<std::string> cpu = collage::resolve_native_target(o.target);
    if (!cpu.ok())
      return absl::InvalidArgumentError(std::string("target: ") +
                                        std::string(cpu.status().message()));
    out.placement.target = *cpu;
    out.artifact.build.target = *cpu;
  }
  if (o.tree_strategy && *o.tree_strategy) {
    auto mode = collage::parse_tree_strategy_mode(o.tree_strategy);
    if (!mode.ok()) return mode.status();
    out.tree_strategy = *mode;
  }
  const bool range = o.batch_max > 0;
  if (range && (o.batch_min < 1 || o.batch_max <= o.batch_min))
    return absl::InvalidArgumentError("batch range " + std::to_string(o.batch_min) + ".." +
                                      std::to_string(o.batch_max) +
                                      ": expected 1 <= batch_min < batch_max");
  out.batch.min = o.batch_min;
  out.batch.max = o.batch_max;
  if (o.num_batch_sizes > 0 && o.batch_sizes)
    out.batch.sizes.assign(o.batch_sizes, o.batch_sizes + o.num_batch_sizes);
  out.progress = Progress{o.progress, o.progress_user_data};
  if (o.progress)
    out.placement.progress = [progress = out.progress](const collage::PlacementProgress& p) {
      // PlacementProgress::phase is one of a fixed set of literals; the callback gets static
      // storage, as collage.h promises.
      static constexpr const char* kPhases[] = {"candidates", "measure",   "op-level",
                                                "evolve",     "finalists", "done"};
      const char* phase = "placement";
      for (const char* name : kPhases)
        if (p.phase == name) phase = name;
      progress.tell(phase, p.measured, p.total, p.generation, p.best_ms);
    };
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

// The model compiled for the batch range of `o` (collage_compile_options_t::batch_min..max),
// each batch imported by `import_at` with its shapes; the report lists each batch's placement.
absl::StatusOr<std::string> compile_batch_range(
    collage_compiler_t* c, const Options& o,
    const std::function<absl::StatusOr<collage::Graph>(const collage::ModelImportOptions&)>&
        import_at,
    std::string* report) {
  const collage::ImportAtBatch import = [&](int64_t batch) -> absl::StatusOr<collage::Graph> {
    collage::ModelImportOptions at = o.import;
    for (const auto& [name, axis] : o.batch.axes) at.onnx.input_shapes[name][axis] = batch;
    auto g = import_at(at);
    if (!g.ok()) return g.status();
    return collage::run_passes(c->ctx, *g);
  };
  auto result = collage::compile_batch_variants(
      c->ctx, c->backends, import, o.batch, o.placement, o.artifact,
      [&](int64_t, size_t index, size_t count) { o.progress.tell("batch", index, count); });
  if (!result.ok()) return result.status();
  if (report) {
    nlohmann::ordered_json batches = nlohmann::ordered_json::array();
    for (const collage::BatchVariant& v : result->variants)
      batches.push_back({{"batch", v.batch},
                         {"placement", nlohmann::ordered_json::parse(
                                           v.result.placement.to_json(v.graph))}});
    nlohmann::ordered_json j = {{"batch_min", o.batch.min}, {"batch_max", o.batch.max},
                                {"padded", result->padded}, {"note", result->note},
                                {"batches", std::move(batches)}};
    *report = j.dump();
  }
  return std::move(result->artifact);
}

// Passes, placement and artifact bytes for an imported graph; the placement report (with the
// tree strategies', when there are `trees`) goes to `report` when it is not null.
absl::StatusOr<std::string> compile_graph(
    collage_compiler_t* c, const collage::Graph& imported, const Options& o, std::string* report,
    const std::vector<collage::TreeStrategyReport>& trees = {}) {
  auto g = collage::run_passes(c->ctx, imported);
  if (!g.ok()) return g.status();
  auto placement = collage::optimize(c->ctx, c->backends, *g, o.placement);
  if (!placement.ok()) return placement.status();
  o.progress.tell("build");
  auto bytes = collage::compile_artifact(c->ctx, c->backends, *g, *placement, o.artifact);
  if (!bytes.ok()) return bytes.status();
  if (report && trees.empty()) *report = placement->to_json(*g);
  if (report && !trees.empty()) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(placement->to_json(*g));
    j["tree_strategies"] = nlohmann::ordered_json::parse(collage::tree_strategy_json(trees));
    *report = j.dump();
  }
  return bytes;
}

// A tree model's strategy is placed and costed as the model will be (its passes included).
collage::TreeCompileOptions tree_compile_options(const Options& o) {
  collage::TreeCompileOptions trees;
  trees.mode = o.tree_strategy;
  trees.placement = o.placement;
  trees.artifact = true;
  if (o.progress.fn)
    trees.progress = [progress = o.progress](const std::string& label) {
      progress.tell("tree-strategy", 0, 0, 0, -1, label.c_str());
    };
  return trees;
}

}  // namespace

extern "C" {

COLLAGE_API const char* collage_compiler_version(void) {
  return COLLAGE_VERSION;
}

COLLAGE_API collage_status_t* collage_compiler_create(collage_compiler_t** compiler) {
  return guarded("collage_compiler_create", [&]() -> collage_status_t* {
    if (!compiler) return invalid("collage_compiler_create: NULL compiler pointer");
    *compiler = nullptr;
    auto c = std::make_unique<collage_compiler>();
    if (absl::Status s = c->backends.add(collage::make_reference_backend()); !s.ok())
      return to_c(s);
    if (absl::Status s = collage::register_eigen_backend(c->backends); !s.ok()) return to_c(s);
    if (absl::Status s = collage::register_dnnl_backend(c->backends); !s.ok()) return to_c(s);
    if (absl::Status s = collage::register_trees_backend(c->backends); !s.ok()) return to_c(s);
    if (absl::Status s = collage::register_native_backend(c->backends); !s.ok()) return to_c(s);
    if (absl::Status s = collage::register_dynamic_backend(c->backends); !s.ok()) return to_c(s);
#ifdef COLLAGE_HAVE_OPENVINO
    if (absl::Status s = collage::register_openvino_backend(c->backends); !s.ok()) return to_c(s);
#else
    c->backends.add_unavailable(std::string(collage::kOpenvinoBackend),
                                std::string(collage::kOpenvinoNotBuilt));
#endif
    *compiler = c.release();
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
    auto backend = collage::load_backend_plugin(path);
    if (!backend.ok()) return to_c(backend.status());
    return to_c(compiler->backends.add(std::move(*backend)));
  });
}

COLLAGE_API void collage_compile_options_init(collage_compile_options_t* options) {
  if (!options) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
}

COLLAGE_API collage_status_t* collage_compile_file(collage_compiler_t* compiler,
                                                   const char* model_path,
                                                   const collage_compile_options_t* options,
                                                   const char* artifact_path, char** report_json) {
  return guarded("collage_compile_file", [&]() -> collage_status_t* {
    if (report_json) *report_json = nullptr;
    if (!compiler || !model_path || !artifact_path)
      return invalid("collage_compile_file: NULL compiler, model path or artifact path");
    Options o;
    if (absl::Status s = options_of(options, &o); !s.ok()) return to_c(s);
    const collage::TreeCompileOptions trees = tree_compile_options(o);
    o.progress.tell("import");
    std::string report;
    absl::StatusOr<std::string> bytes;
    if (o.batch.max) {
      bytes = compile_batch_range(
          compiler, o,
          [&](const collage::ModelImportOptions& at) -> absl::StatusOr<collage::Graph> {
            auto m = collage::import_compile_model(compiler->ctx, compiler->backends, model_path,
                                                   at, trees);
            if (!m.ok()) return m.status();
            return std::move(m->graph);
          },
          report_json ? &report : nullptr);
    } else {
      auto m = collage::import_compile_model(compiler->ctx, compiler->backends, model_path,
                                             o.import, trees);
      if (!m.ok()) return to_c(m.status());
      bytes = compile_graph(compiler, m->graph, o, report_json ? &report : nullptr, m->trees);
    }
    if (!bytes.ok()) return to_c(bytes.status());
    auto writer = collage::io::AtomicFileWriter::create(artifact_path);
    absl::Status s = writer.ok() ? (*writer)->write(*bytes) : writer.status();
    if (s.ok()) s = (*writer)->commit();
    if (!s.ok()) return to_c(s);
    if (report_json) *report_json = static_cast<char*>(copy_out(report));
    return nullptr;
  });
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
    Options o;
    if (absl::Status s = options_of(options, &o); !s.ok()) return to_c(s);
    const collage::TreeCompileOptions trees = tree_compile_options(o);
    std::vector<collage::TreeStrategyReport> reports;
    o.import.onnx.tree_strategy =
        collage::compile_tree_strategy_chooser(compiler->ctx, compiler->backends, trees, reports);
    const std::span<const uint8_t> bytes_in(static_cast<const uint8_t*>(model), model_size);
    o.progress.tell("import");
    std::string report;
    absl::StatusOr<std::string> bytes;
    if (o.batch.max) {
      bytes = compile_batch_range(
          compiler, o,
          [&](const collage::ModelImportOptions& at) {
            return collage::import_onnx_buffer(compiler->ctx, bytes_in, at.onnx);
          },
          report_json ? &report : nullptr);
    } else {
      auto g = collage::import_onnx_buffer(compiler->ctx, bytes_in, o.import.onnx);
      if (!g.ok()) return to_c(g.status());
      bytes = compile_graph(compiler, *g, o, report_json ? &report : nullptr, reports);
    }
    if (!bytes.ok()) return to_c(bytes.status());
    std::unique_ptr<void, decltype(&std::free)> out(copy_out(*bytes), &std::free);
    if (report_json) *report_json = static_cast<char*>(copy_out(report));
    *artifact = out.release();
    *artifact_size = bytes->size();
    return nullptr;
  });
}

COLLAGE_API void collage_free(void* buffer) {
  std::free(buffer);
}

}  // extern "C"
