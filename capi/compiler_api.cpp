// The compiler C API (include/collage/collage.h): a thin skin over import, passes, placement
// (optimize) and the artifact writer.
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "artifact/artifact.h"
#include "collage/backend_loader.h"
#include "collage/backends/dnnl.h"
#include "collage/backends/eigen.h"
#include "collage/backends/native.h"
#include "collage/backends/trees.h"
#include "collage/collage.h"
#include "collage/executor.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/placement.h"
#include "collage/trees.h"
#include "io/file_io.h"
#include "driver/tree_strategy.h"
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

struct Options {
  collage::PlacementOptions placement;
  collage::ModelImportOptions import;
  collage::ArtifactOptions artifact;
  collage::TreeStrategyMode tree_strategy;  // measured by default
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
  if (o.tree_strategy && *o.tree_strategy) {
    auto mode = collage::parse_tree_strategy_mode(o.tree_strategy);
    if (!mode.ok()) return mode.status();
    out.tree_strategy = *mode;
  }
  for (int32_t i = 0; i < o.num_input_shapes && o.input_shapes; ++i) {
    const collage_input_shape_t& s = o.input_shapes[i];
    if (!s.name || s.ndim < 0 || (s.ndim > 0 && !s.shape))
      return absl::InvalidArgumentError("input shape " + std::to_string(i) +
                                        ": NULL name or shape, or a negative rank");
    out.import.onnx.input_shapes[s.name] = collage::Shape(s.shape, s.shape + s.ndim);
  }
  return absl::OkStatus();
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
    auto m = collage::import_compile_model(compiler->ctx, compiler->backends, model_path, o.import,
                                           trees);
    if (!m.ok()) return to_c(m.status());
    std::string report;
    auto bytes = compile_graph(compiler, m->graph, o, report_json ? &report : nullptr, m->trees);
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
    auto g = collage::import_onnx_buffer(
        compiler->ctx, {static_cast<const uint8_t*>(model), model_size}, o.import.onnx);
    if (!g.ok()) return to_c(g.status());
    std::string report;
    auto bytes = compile_graph(compiler, *g, o, report_json ? &report : nullptr, reports);
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
